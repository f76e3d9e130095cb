/**
 * What a guest may not leave behind in the owner's one PGlite session. PGlite is one PostgreSQL
 * session, so a guest's `SET search_path`, `SET default_transaction_read_only`, `SET ROLE`,
 * `SET SESSION AUTHORIZATION`, `UNLISTEN *` or temporary table (which shadows the inbox's table of
 * the same name) would change every statement the owner runs after it. The session's state is
 * noted when a guest takes PGlite and put back when the guest lets it go (its transaction ended,
 * or it went away): a guest's session state lasts one transaction.
 *
 * Statements PGlite cannot bound are refused to guests: PGlite runs in the owner's main thread and
 * cannot be interrupted (statement_timeout never fires), so a guest's `pg_sleep(40)` would stop the
 * owner, its HTTP answers included, for 40 s.
 */
import { query } from './wire.js';

/** PGlite's protocol, parsed (its own `query` would wait for the queue the guest holds). */
export interface ProtocolSession {
  execProtocol(
    message: Uint8Array,
    options?: { syncToFs?: boolean },
  ): Promise<{ readonly messages: readonly { readonly name: string; readonly fields?: readonly unknown[] }[] }>;
}

const LISTEN = /^\s*(un)?listen\b/i;
const SLEEP = /\bpg_sleep(_for|_until)?\s*\(/i;

/** Why a guest's statement is not run (it is refused with SQLSTATE 0A000), or undefined when it may be. */
export function refusalOf(statement: string | undefined): string | undefined {
  if (statement === undefined) return undefined;
  if (LISTEN.test(statement)) return 'LISTEN is not served to guests of a PGlite directory: poll instead';
  if (SLEEP.test(statement)) {
    return "pg_sleep is not served to guests of a PGlite directory: PGlite cannot interrupt it, and the owner's deliveries would wait for it";
  }
  return undefined;
}

/**
 * One row, one text column: the session's own settings (set by SET or set_config), its users, its
 * temporary relations and the channels it listens to.
 */
const SNAPSHOT = `SELECT json_build_object(
  'settings', (SELECT coalesce(json_agg(json_build_array(name, current_setting(name)) ORDER BY name), '[]') FROM pg_settings WHERE source = 'session'),
  'sessionUser', session_user::text, 'currentUser', current_user::text,
  'temporary', (SELECT coalesce(json_agg(oid::bigint ORDER BY oid), '[]') FROM pg_class WHERE relnamespace = pg_my_temp_schema()),
  'channels', (SELECT coalesce(json_agg(c ORDER BY c), '[]') FROM pg_listening_channels() AS c))::text`;

interface Snapshot {
  readonly settings: [string, string][];
  readonly sessionUser: string;
  readonly currentUser: string;
  readonly temporary: number[];
  readonly channels: string[];
}

const identifier = (name: string) => `"${name.replaceAll('"', '""')}"`;
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

/** The owner's session state while a guest holds PGlite: noted, then put back. */
export class GuestSession {
  #before: string | undefined;

  constructor(private readonly db: ProtocolSession) {}

  /** Notes the session's state; PGlite must be idle ('I') and held for this guest. */
  async note(): Promise<void> {
    this.#before = await this.#snapshot();
  }

  /** Puts back what the guest changed since note(); PGlite idle and still held. */
  async restore(): Promise<void> {
    const before = this.#before;
    this.#before = undefined;
    if (before === undefined) return;
    const now = await this.#snapshot();
    if (now === before) return;
    const [noted, found] = [JSON.parse(before) as Snapshot, JSON.parse(now) as Snapshot];
    try {
      for (const statement of restoring(noted, found, dropTemporary)) await this.#run(statement);
    } catch {
      // Something of the guest's would not go one by one: every temporary object goes, the owner's too.
      for (const statement of restoring(noted, found, () => 'DISCARD TEMP')) await this.#run(statement);
    }
    const after = await this.#snapshot();
    if (after !== before) throw new Error(`a guest's session state could not be put back: ${after}`);
  }

  async #snapshot(): Promise<string> {
    const row = (await this.#run(SNAPSHOT)).find((message) => message.name === 'dataRow');
    if (typeof row?.fields?.[0] !== 'string') throw new Error("reading the owner's session state: no row came back");
    return row.fields[0];
  }

  async #run(text: string) {
    try {
      return (await this.db.execProtocol(query(text), { syncToFs: false })).messages;
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(`putting back the owner's session after a guest failed: ${reason}`, { cause: error });
    }
  }
}

/** The statements that take the session from `now` back to `before`. */
function restoring(before: Snapshot, now: Snapshot, drop: (oids: readonly number[]) => string): string[] {
  const statements = ['SET SESSION AUTHORIZATION DEFAULT', 'RESET ALL'];
  if (before.sessionUser !== now.sessionUser || before.currentUser !== now.currentUser) {
    statements.push(`SET SESSION AUTHORIZATION ${identifier(before.sessionUser)}`);
    if (before.currentUser !== before.sessionUser) statements.push(`SET ROLE ${identifier(before.currentUser)}`);
  }
  for (const [name, value] of before.settings) statements.push(`SELECT set_config(${literal(name)}, ${literal(value)}, false)`);
  const added = now.temporary.filter((oid) => !before.temporary.includes(oid));
  if (added.length > 0) statements.push(drop(added));
  for (const channel of now.channels) if (!before.channels.includes(channel)) statements.push(`UNLISTEN ${identifier(channel)}`);
  for (const channel of before.channels) if (!now.channels.includes(channel)) statements.push(`LISTEN ${identifier(channel)}`);
  return statements;
}

/** Drops the guest's temporary relations (their indexes and types go with them). */
function dropTemporary(oids: readonly number[]): string {
  // Sequences last (an identity column's cannot go before its table), and each relation looked up
  // when its turn comes: it may have gone with one dropped before it.
  return `DO $rwt$ DECLARE r record; BEGIN
    FOR r IN SELECT oid, relkind FROM pg_class
      WHERE relnamespace = pg_my_temp_schema() AND relkind IN ('r', 'p', 'v', 'm', 'S', 'f') AND oid = ANY('{${oids.join(',')}}'::oid[])
      ORDER BY relkind = 'S', relkind = 'v'
    LOOP
      IF EXISTS (SELECT 1 FROM pg_class WHERE oid = r.oid) THEN
        EXECUTE format('DROP %s %s CASCADE',
          CASE r.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW' WHEN 'S' THEN 'SEQUENCE' WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END,
          r.oid::regclass);
      END IF;
    END LOOP; END $rwt$`;
}
