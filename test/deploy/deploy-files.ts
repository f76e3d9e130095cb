// Reads the deploy files (deploy/Dockerfile, deploy/compose.yaml, deploy/kubernetes.yaml) the way
// their tools would, for the tests that hold them to the inbox example's contract. There is no
// container runtime here: the Dockerfile is parsed, and its CMD run with its ENV from the repository.
import { readFileSync } from 'node:fs';
import { parse, parseAllDocuments } from 'yaml';
import { ROOT } from '../examples/helpers.js';

export const read = (file: string): string => readFileSync(`${ROOT}${file}`, 'utf8');

/** What a stage of the Dockerfile sets: its instructions' arguments, ENV merged in order. */
export interface DockerStage {
  from: string;
  env: Record<string, string>;
  run: string[];
  copy: string[];
  expose: number[];
  user: string | undefined;
  workdir: string | undefined;
  /** Exec form as the array; shell form as `/bin/sh -c <text>`, as Docker runs it. */
  cmd: string[] | undefined;
}

const unquote = (value: string): string =>
  /^"(.*)"$/s.test(value) ? value.slice(1, -1).replace(/\\(.)/g, '$1') : /^'(.*)'$/s.test(value) ? value.slice(1, -1) : value;

function envPairs(args: string): Record<string, string> {
  // `ENV a=1 b="two words"`, or the legacy `ENV name the rest of the line`.
  if (!/^[A-Za-z_][\w]*=/.test(args)) {
    const [name, ...rest] = args.split(/\s+/);
    return { [name!]: rest.join(' ') };
  }
  const pairs: Record<string, string> = {};
  for (const [, name, value] of args.matchAll(/([A-Za-z_]\w*)=("(?:[^"\\]|\\.)*"|'[^']*'|\S*)/g)) pairs[name!] = unquote(value!);
  return pairs;
}

/** Every stage of a Dockerfile, in order (the last is the image). Line continuations and comments as Docker reads them. */
export function dockerStages(text: string): DockerStage[] {
  const lines = text
    .replace(/\\\r?\n/g, ' ')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const stages: DockerStage[] = [];
  for (const line of lines) {
    const [, keyword, args = ''] = /^(\S+)\s*(.*)$/.exec(line)!;
    const instruction = keyword!.toUpperCase();
    if (instruction === 'FROM') {
      stages.push({ from: args, env: {}, run: [], copy: [], expose: [], user: undefined, workdir: undefined, cmd: undefined });
      continue;
    }
    const stage = stages.at(-1);
    if (stage === undefined) continue; // ARG before the first FROM
    if (instruction === 'ENV') Object.assign(stage.env, envPairs(args));
    else if (instruction === 'RUN') stage.run.push(args);
    else if (instruction === 'COPY') stage.copy.push(args);
    else if (instruction === 'EXPOSE') stage.expose.push(...args.split(/\s+/).map((port) => Number(port.split('/')[0])));
    else if (instruction === 'USER') stage.user = args;
    else if (instruction === 'WORKDIR') stage.workdir = args;
    else if (instruction === 'CMD') stage.cmd = args.startsWith('[') ? (JSON.parse(args) as string[]) : ['/bin/sh', '-c', args];
  }
  return stages;
}

export const dockerfile = (): DockerStage[] => dockerStages(read('deploy/Dockerfile'));
export const image = (): DockerStage => dockerfile().at(-1)!;

export const compose = (): any => parse(read('deploy/compose.yaml'));

/** The manifest's documents by kind (one of each here). */
export function kubernetes(): Record<string, any> {
  const documents = parseAllDocuments(read('deploy/kubernetes.yaml'));
  const byKind: Record<string, any> = {};
  for (const document of documents) {
    if (document.errors.length > 0) throw new Error(`deploy/kubernetes.yaml: ${document.errors.map((e) => e.message).join('; ')}`);
    const value = document.toJS() as { kind: string };
    byKind[value.kind] = value;
  }
  return byKind;
}

/** The one container of the Deployment's pods. */
export const container = (manifest = kubernetes()): any => manifest['Deployment'].spec.template.spec.containers[0];

/** A probe's or a Service's named port, resolved to the container's number. */
export function portNumber(port: number | string, manifest = kubernetes()): number {
  if (typeof port === 'number') return port;
  const named = (container(manifest).ports as { name?: string; containerPort: number }[]).find((p) => p.name === port);
  if (named === undefined) throw new Error(`no container port named ${port} in deploy/kubernetes.yaml`);
  return named.containerPort;
}

/** Compose durations: `40s`, `1m30s`, `1500ms`. */
export function composeSeconds(duration: string): number {
  let seconds = 0;
  for (const [, amount, unit] of duration.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g))
    seconds += Number(amount) * { ms: 0.001, s: 1, m: 60, h: 3600 }[unit as 'ms' | 's' | 'm' | 'h'];
  return seconds;
}

/**
 * The environment variables examples/express-inbox.mjs takes (the contract the deploy files are
 * written against), and NODE_ENV, which Express reads.
 */
export const EXAMPLE_ENV = [
  'RACK_WEBHOOK_SECRETS',
  'DATABASE_URL',
  'INBOX_DIR',
  'INBOX_TABLE',
  'PORT',
  'HOST',
  'SHUTDOWN_DRAIN_MS',
  'REUSE_PORT',
  'NODE_ENV',
] as const;

/**
 * How long the example's shutdown may take after SIGTERM, in seconds: the drain, then the requests
 * in flight (`requestTimeoutMs`), then the worker (`workerTimeoutMs`), then closing. The two
 * timeouts are read from the example when it states them as numbers, else the contract's 10 s each;
 * closing (the inbox's last refusal counts, the pool) gets `CLOSE_SECONDS`.
 */
export const CLOSE_SECONDS = 5;
export function shutdownSeconds(drainMs: number): { drain: number; requests: number; worker: number; close: number; total: number } {
  const source = read('examples/express-inbox.mjs');
  const stated = (name: string) => {
    const match = new RegExp(`\\b${name}:\\s*([\\d_]+)\\b`).exec(source);
    return match === null ? 10 : Number(match[1]!.replace(/_/g, '')) / 1000;
  };
  const parts = { drain: drainMs / 1000, requests: stated('requestTimeoutMs'), worker: stated('workerTimeoutMs'), close: CLOSE_SECONDS };
  return { ...parts, total: parts.drain + parts.requests + parts.worker + parts.close };
}

/** The preStop hook's seconds: the `sleep` action, or `exec: sleep N`; 0 without a hook. */
export function preStopSeconds(manifest = kubernetes()): number {
  const preStop = container(manifest).lifecycle?.preStop;
  if (preStop === undefined) return 0;
  if (preStop.sleep !== undefined) return Number(preStop.sleep.seconds);
  const command = preStop.exec?.command as string[] | undefined;
  if (command?.[0] === 'sleep' && command.length === 2) return Number(command[1]);
  throw new Error(`deploy/kubernetes.yaml: a preStop hook that is not a sleep (${JSON.stringify(preStop)}): count its time by hand`);
}
