-- memd cloud sync schema, shared by the `postgres` and `supabase` backends.
--
-- Idempotent: safe to run again (`memd sync init-schema` for Postgres; for Supabase paste the
-- whole file into the SQL editor). Every object name starts with `memd_files` or
-- `memd_file_events` so memd can install a copy under another table name.
--
-- How writes behave (enforced by the trigger, so direct SQL and Supabase REST upserts agree):
--   * `synced_at` is always assigned by the server, never taken from the client. It is strictly
--     increasing per namespace and follows commit order (writers to one namespace take a
--     transaction-scoped advisory lock), so `pull(since=<last synced_at seen>)` never skips a
--     row that a slower transaction committed later.
--   * Replays are no-ops: a write whose op_id is already in memd_file_events changes nothing
--     (no second event, synced_at unchanged).
--   * Per-device order wins over arrival order: a write is dropped when the same device already
--     wrote this (namespace, path) with a higher version (checked against the stored row and the
--     event log, so a late op cannot even undo a newer one after another device wrote between).
--   * Compare-and-swap between devices: a write carries `base_sha256`, the sha256 of the cloud
--     row its device last saw for the file ('' = none). If the stored row was written by
--     another device and holds other bytes than that base (and than the write itself), the
--     write is skipped: that device's version would be overwritten unseen. The client pulls it
--     (a conflict copy when both sides changed) and pushes again on the new base.
--     `base_sha256` is never stored (always NULL in the table).
--   * A write with a NULL base (older memd clients, hand-written SQL) skips that check: the
--     last write that arrives wins, and each device detects the conflict when it pulls.
--   * Deletes are tombstones (`deleted = true`), so they travel through pull like any change.
--   * memd_file_events gets one row per applied write, in synced_at order (`received_at` is the
--     write's synced_at): the proof that each operation arrived exactly once and in order.
--
-- Row level security is enabled with no policies: on Supabase only the service_role / secret
-- key (and the table owner over a direct connection) can read or write memory. Never expose the
-- table to the anon key without policies keyed to your users.

create table if not exists memd_files (
    namespace   text not null check (namespace <> ''),
    path        text not null check (path <> '' and path not like '/%'),
    content     text not null default '',
    sha256      text not null,
    updated_at  double precision not null,
    deleted     boolean not null default false,
    device_id   text not null check (device_id <> ''),
    version     bigint not null check (version >= 0),
    op_id       text not null check (op_id <> ''),
    synced_at   double precision not null default extract(epoch from clock_timestamp()),
    base_sha256 text,
    primary key (namespace, path)
);

-- Upgrade of a table created before compare-and-swap.
alter table memd_files add column if not exists base_sha256 text;

create index if not exists memd_files_namespace_synced_at_idx
    on memd_files (namespace, synced_at);

create table if not exists memd_file_events (
    op_id       text primary key,
    namespace   text not null,
    path        text not null,
    sha256      text not null,
    version     bigint not null,
    device_id   text not null,
    deleted     boolean not null,
    updated_at  double precision not null,
    received_at double precision not null default extract(epoch from clock_timestamp())
);

create index if not exists memd_file_events_device_version_idx
    on memd_file_events (namespace, path, device_id, version);

create or replace function memd_files_before_write() returns trigger
language plpgsql
set search_path from current
as $$
declare
    last_synced double precision;
begin
    -- Held until commit: writers to one namespace run one after another, so synced_at order is
    -- commit order and a reader's cursor cannot overtake an uncommitted row.
    perform pg_advisory_xact_lock(hashtextextended(tg_table_name || ':' || new.namespace, 0));

    if exists (select 1 from memd_file_events e where e.op_id = new.op_id) then
        return null;  -- replayed operation: already applied once
    end if;

    if tg_op = 'UPDATE' and new.device_id = old.device_id and new.version < old.version then
        return null;  -- stale: this device already stored a newer version
    end if;
    if exists (
        select 1 from memd_file_events e
        where e.namespace = new.namespace and e.path = new.path
          and e.device_id = new.device_id and e.version > new.version
    ) then
        return null;  -- stale: a newer op from this device was applied before another device's
    end if;

    if tg_op = 'UPDATE' then
        if new.base_sha256 is not null and old.device_id <> new.device_id
           and old.sha256 <> new.base_sha256 and old.sha256 <> new.sha256 then
            return null;  -- compare-and-swap: another device stored a version this one never saw
        end if;
        new.base_sha256 := null;
    elsif not exists (
        select 1 from memd_files f where f.namespace = new.namespace and f.path = new.path
    ) then
        -- A plain insert. When the row exists the insert turns into the UPDATE above, whose
        -- `excluded` row carries what this trigger returns, so the base must survive till then.
        new.base_sha256 := null;
    end if;

    -- Written as ORDER BY … LIMIT 1, not max(): the cached generic plan of max() may scan the
    -- whole namespace per write (seen: 2,000 pushed rows 5x slower) instead of reading one
    -- index entry.
    select f.synced_at into last_synced from memd_files f where f.namespace = new.namespace
        order by f.synced_at desc limit 1;
    -- Strictly increasing even if the server clock steps back or two rows share a microsecond.
    new.synced_at := greatest(
        extract(epoch from clock_timestamp())::double precision,
        coalesce(last_synced, 0) + 0.000001
    );
    return new;
end;
$$;

create or replace function memd_files_after_write() returns trigger
language plpgsql
set search_path from current
as $$
begin
    insert into memd_file_events
        (op_id, namespace, path, sha256, version, device_id, deleted, updated_at, received_at)
    values
        (new.op_id, new.namespace, new.path, new.sha256, new.version, new.device_id,
         new.deleted, new.updated_at, new.synced_at)
    on conflict (op_id) do nothing;
    return null;
end;
$$;

drop trigger if exists memd_files_before_write_trg on memd_files;
create trigger memd_files_before_write_trg
    before insert or update on memd_files
    for each row execute function memd_files_before_write();

drop trigger if exists memd_files_after_write_trg on memd_files;
create trigger memd_files_after_write_trg
    after insert or update on memd_files
    for each row execute function memd_files_after_write();

alter table memd_files enable row level security;
alter table memd_file_events enable row level security;

-- Supabase: make PostgREST see the new tables at once (a no-op on plain Postgres).
notify pgrst, 'reload schema';
