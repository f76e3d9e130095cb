/**
 * PGlite's files on disk as PostgreSQL keeps its own: synced, and private to the owner's user.
 *
 * PGlite starts PostgreSQL with fsync off (`-F`), and its Node file system (Emscripten's NODEFS)
 * has no fsync at all: a delivery answered 200 sat in the page cache, and a power loss or kernel
 * crash could take it. Here fsync is on, with `wal_sync_method=fsync` (Emscripten's fdatasync does
 * nothing; its fsync reaches the file system's own), and NODEFS's fsync calls Node's fsyncSync. So
 * a commit returns once its WAL is on disk, as with PostgreSQL.
 *
 * NODEFS also creates files 0666 and directories 0777 less the umask: each new one is made the
 * owner's alone (0600, 0700), and a chmod through PGlite never gives other users a bit.
 */
import type * as NodeFsSync from 'node:fs';

/** The parts of Emscripten's NODEFS patched here. */
interface Nodefs {
  realPath(node: EmscriptenNode): string;
  tryFSOperation<T>(fn: () => T): T;
  node_ops: {
    mknod(parent: EmscriptenNode, name: string, mode: number, dev: number): EmscriptenNode;
    setattr(node: EmscriptenNode, attr: Attr): void;
  };
  stream_ops: { setattr?(stream: unknown, attr: Attr): void; fsync?(stream: { nfd?: number }): number };
}
interface EmscriptenNode {
  readonly mode: number;
}
interface Attr {
  mode?: number;
}
interface EmscriptenModule {
  readonly NODEFS: Nodefs;
}

/** PGlite's NodeFS, typed structurally (an optional peer). */
export interface NodeFSClass {
  new (dataDir: string): {
    init(pg: unknown, options: { preRun?: ((module: EmscriptenModule) => void)[] }): Promise<{ emscriptenOpts: { preRun?: unknown[] } }>;
  };
}

const DIRECTORY = 0o040000;
const TYPE = 0o170000;

/** Makes NODEFS sync what PostgreSQL syncs and create what it creates private. */
function guard(nodefs: Nodefs, fs: typeof NodeFsSync): void {
  const { mknod, setattr } = nodefs.node_ops;
  nodefs.node_ops.mknod = (parent, name, mode, dev) => {
    const node = mknod(parent, name, mode, dev);
    const path = nodefs.realPath(node);
    nodefs.tryFSOperation(() => fs.chmodSync(path, (node.mode & TYPE) === DIRECTORY ? 0o700 : 0o600));
    return node;
  };
  const owners = (attr: Attr): Attr => (attr.mode === undefined ? attr : { ...attr, mode: attr.mode & ~0o077 });
  nodefs.node_ops.setattr = (node, attr) => setattr(node, owners(attr));
  const streamSetattr = nodefs.stream_ops.setattr;
  if (streamSetattr !== undefined) nodefs.stream_ops.setattr = (stream, attr) => streamSetattr(stream, owners(attr));
  nodefs.stream_ops.fsync = (stream) => {
    const { nfd } = stream;
    if (nfd !== undefined) nodefs.tryFSOperation(() => fs.fsyncSync(nfd));
    return 0;
  };
}

/** `new PGlite(dir, options)`'s file system for the owner: PGlite's NodeFS, guarded. */
function durableFileSystem(NodeFS: NodeFSClass, dir: string, fs: typeof NodeFsSync): InstanceType<NodeFSClass> {
  class DurableNodeFS extends NodeFS {
    override async init(pg: unknown, options: { preRun?: ((module: EmscriptenModule) => void)[] }) {
      const preRun = [...(options.preRun ?? []), (module: EmscriptenModule) => guard(module.NODEFS, fs)];
      return super.init(pg, { ...options, preRun });
    }
  }
  return new DurableNodeFS(dir);
}

const load = (name: string): Promise<unknown> => import(/* webpackIgnore: true */ /* @vite-ignore */ name);

/**
 * The owner's `new PGlite(dir, options)` options: the guarded file system, and PGlite's start
 * parameters with fsync on, through fsync(2). PGlite versions without `defaultStartParams` keep
 * their own start parameters (and fsync off).
 */
export async function durableOptions(PGlite: { defaultStartParams?: readonly string[] }, dir: string): Promise<Record<string, unknown>> {
  const [{ NodeFS }, fs] = (await Promise.all([load('@electric-sql/pglite/nodefs'), load('node:fs')])) as [
    { NodeFS: NodeFSClass },
    typeof NodeFsSync,
  ];
  const defaults = PGlite.defaultStartParams;
  const startParams = defaults && [...defaults.filter((param) => param !== '-F'), '-c', 'fsync=on', '-c', 'wal_sync_method=fsync'];
  return { fs: durableFileSystem(NodeFS, dir, fs), ...(startParams && { startParams }) };
}

/** fsync(2) on every file and directory under `dir`: what a new directory's initdb wrote is on disk. */
export async function syncTree(dir: string): Promise<void> {
  const fs = (await load('node:fs/promises')) as typeof import('node:fs/promises');
  const sync = async (path: string) => {
    const handle = await fs.open(path, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  };
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true });
  // parentPath from Node 20.12; `path` before it.
  const parent = (entry: { parentPath?: string; path?: string }) => entry.parentPath ?? entry.path;
  const paths = entries.filter((entry) => entry.isFile() || entry.isDirectory()).map((entry) => `${parent(entry)}/${entry.name}`);
  // A few at a time: the file system commits fsyncs that wait together at once (~5 ms each alone here).
  for (let i = 0; i < paths.length; i += 16) await Promise.all(paths.slice(i, i + 16).map(sync));
  await sync(dir);
}
