// esbuild bundles the stylesheet imported by main.ts; TypeScript only needs to know the import is fine.
declare module '*.css';
