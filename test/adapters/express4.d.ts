// express4 is Express 4 installed under an alias for the adapter suite; its API is typed as Express.
declare module 'express4' {
  import express from 'express';
  export default express;
}
