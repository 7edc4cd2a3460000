#!/usr/bin/env python3
"""Run `vramdiff batch` past one machine on Dask distributed: one task per shard, each calling the vramdiff
binary with `batch --shard K/N` on the same inputs, then merge the shards' tables into one.

    python3 examples/dask/fleet_batch.py INPUT... [--shards N] [--scheduler tcp://host:8786]
        [--binary PATH] [--workdir DIR] [--out DIR] [--partition-by era,engine] [--expect SINGLE_RUN_DIR]

Without --scheduler a LocalCluster with two worker processes runs the shards; with it, the tasks go to that
cluster, whose workers must see the binary, the inputs and --out at the same paths (a shared mount, or object
storage mounted on every node). --expect names the folder of a single-machine run (`vramdiff batch INPUT...
--out DIR`, same INPUT spelling, same working directory): the merged tables must equal its tables row for row,
and the calibration recomputed from the merged components must equal its calibration; exit 1 otherwise.

Needs: pip install "dask[distributed]" pandas pyarrow.
"""
import argparse
import os
import shutil
import subprocess
import sys
import time

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds

# Rows in `vramdiff batch` order: files by path (a file's rows all sit in one shard), loads in log order, and a
# load's component rows in the order vramdiff wrote them (a stable sort keeps it).
ORDER = ["file", "load"]


def run_shard(binary: str, inputs: list, shard: int, shards: int, out: str, workdir: str, partition_by: str,
              threads: int) -> dict:
    """One Dask task: `vramdiff batch INPUT... --shard K/N --out OUT` in `workdir`. Returns what it did."""
    cmd = [binary, "batch", "--quiet", "--shard", f"{shard}/{shards}", "--out", out, "--threads", str(threads)]
    if partition_by:
        cmd += ["--partition-by", partition_by]
    start = time.monotonic()
    done = subprocess.run(cmd + inputs, cwd=workdir, capture_output=True, text=True)
    seconds = time.monotonic() - start
    # 0: ok, 1: the CI gate failed (the tables are written all the same), 2: an error.
    if done.returncode not in (0, 1):
        raise RuntimeError(f"shard {shard}/{shards} failed ({done.returncode}): {done.stderr.strip()}")
    last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
    return {"shard": shard, "seconds": seconds, "status": done.returncode, "said": last.removeprefix("vramdiff: ")}


def fnv1a64(data: bytes) -> int:
    """FNV-1a 64, as `vramdiff batch --shard` hashes each file's path below its folder."""
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def read_flat(out: str, table: str, shards: int) -> pd.DataFrame:
    parts = [pd.read_parquet(os.path.join(out, f"{table}-{k}-of-{shards}.parquet")) for k in range(1, shards + 1)]
    return pd.concat(parts, ignore_index=True)


def read_dataset(out: str, table: str, by: list, columns: list) -> pd.DataFrame:
    # Partition values are text (`era=0.30` is not the number 0.3); an empty value reads back as null.
    schema = pa.schema([(c, pa.string()) for c in by])
    df = ds.dataset(os.path.join(out, table), format="parquet",
                    partitioning=ds.partitioning(schema, flavor="hive")).to_table().to_pandas()
    return df[columns] if columns else df


def merge(out: str, shards: int, by: list, columns: dict) -> dict:
    """The shards' `loads` and `components` as one table each, in the single-machine run's row order."""
    merged = {}
    for table in ["loads", "components"]:
        if by:
            df = read_dataset(out, table, by, columns.get(table))
            key = ORDER if table == "loads" else ORDER + ["kind", "name"]
        else:
            df = read_flat(out, table, shards)
            key = ORDER
        merged[table] = df.sort_values(key, kind="stable").reset_index(drop=True)
    return merged


def calibration(components: pd.DataFrame) -> pd.DataFrame:
    """`calibration.parquet` recomputed from a components table: a whole-set aggregate no shard can compute
    alone. Same definition as vramdiff's: per component × compute capability, the loads with a ratio, the median
    and the linear p10/p90 of actual/estimated."""
    rows = components[(components["kind"] == "component") & components["ratio"].notna()]
    g = rows.groupby(["name", "compute"], sort=True)["ratio"]
    table = pd.DataFrame({
        "loads": g.count(),
        "factor": g.median(),
        "p10": g.quantile(0.1, interpolation="linear"),
        "p90": g.quantile(0.9, interpolation="linear"),
    }).reset_index().rename(columns={"name": "component"})
    return table


def normalised(df: pd.DataFrame) -> pd.DataFrame:
    # Missing values as None whatever the dtype, so that a comparison looks at values only.
    df = df.reset_index(drop=True)
    return df.astype(object).where(df.notna(), None)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="+", help="folders, globs or files, as `vramdiff batch` takes them")
    ap.add_argument("--shards", type=int, default=4, help="number of shares (tasks); default 4")
    ap.add_argument("--scheduler", help="a Dask scheduler address, tcp://host:8786 (default: a LocalCluster)")
    ap.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes (default 2)")
    ap.add_argument("--binary", default=shutil.which("vramdiff") or "target/release/vramdiff",
                    help="the vramdiff binary, as the workers see it")
    ap.add_argument("--workdir", default=os.getcwd(), help="where the workers run it (default: here)")
    ap.add_argument("--out", default="fleet-out", help="the shared output folder (default fleet-out)")
    ap.add_argument("--partition-by", default="", help="write a Hive-partitioned dataset (e.g. era,engine)")
    ap.add_argument("--threads", type=int, default=1,
                    help="vramdiff threads per task (default 1: a Dask worker thread is one core; 0: every core)")
    ap.add_argument("--expect", help="a single-machine run's --out folder: the merge must equal it")
    args = ap.parse_args()
    if args.shards < 1:
        ap.error("--shards must be at least 1")
    binary = os.path.join(args.workdir, args.binary) if not os.path.isabs(args.binary) else args.binary
    out = os.path.join(args.workdir, args.out)
    if os.path.exists(out):
        shutil.rmtree(out)  # one run per folder: a dataset split another way would be refused anyway
    os.makedirs(out)

    from dask.distributed import Client, LocalCluster

    start = time.monotonic()
    cluster = None
    if args.scheduler:
        client = Client(args.scheduler)
    else:
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    try:
        futures = [
            client.submit(run_shard, binary, args.inputs, k, args.shards, out, args.workdir, args.partition_by,
                          args.threads, key=f"vramdiff-shard-{k}-of-{args.shards}", pure=False)
            for k in range(1, args.shards + 1)
        ]
        results = client.gather(futures)
        workers = len(client.scheduler_info()["workers"])
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    wall = time.monotonic() - start
    for r in results:
        print(f"shard {r['shard']}/{args.shards}: {r['said']} ({r['seconds']:.1f} s, exit {r['status']})")

    by = [c for c in args.partition_by.split(",") if c]
    columns = {}
    if args.expect:
        columns = {t: list(pd.read_parquet(os.path.join(args.expect, f"{t}.parquet")).columns)
                   for t in ["loads", "components"]}
    merged = merge(out, args.shards, by, columns)
    merged_dir = os.path.join(out, "merged")
    os.makedirs(merged_dir, exist_ok=True)
    for table, df in merged.items():
        df.to_parquet(os.path.join(merged_dir, f"{table}.parquet"), index=False)
    calib = calibration(merged["components"])
    calib.to_parquet(os.path.join(merged_dir, "calibration.parquet"), index=False)
    print(f"merged: {len(merged['loads'])} loads, {len(merged['components'])} component rows, "
          f"{len(calib)} calibration rows from {args.shards} shards on {workers} workers in {wall:.1f} s "
          f"→ {merged_dir}")

    if not args.expect:
        return 0
    problems = []
    for table, df in merged.items():
        want = pd.read_parquet(os.path.join(args.expect, f"{table}.parquet"))
        got = df
        if by:
            # A null or empty partition value is one folder, __HIVE_DEFAULT_PARTITION__, read back as null.
            want = want.copy()
            for c in by:
                want[c] = want[c].replace("", None)
            key = ORDER if table == "loads" else ORDER + ["kind", "name"]
            want = want.sort_values(key, kind="stable")
        try:
            pd.testing.assert_frame_equal(normalised(got), normalised(want), check_dtype=False)
            print(f"{table}: the merged table equals the single-machine run row for row ({len(want)} rows)")
        except AssertionError as e:
            problems.append(f"{table}: the merged table differs from the single-machine run: {e}")
    want = pd.read_parquet(os.path.join(args.expect, "calibration.parquet"))
    try:
        pd.testing.assert_frame_equal(normalised(calib), normalised(want), check_dtype=False, check_exact=False,
                                      rtol=1e-12)
        print(f"calibration: recomputed from the merged components, equals the single-machine run ({len(want)} rows)")
    except AssertionError as e:
        problems.append(f"calibration differs: {e}")
    # Each file of a folder input sits in the shard FNV-1a 64 of its path below the folder names (mod N, plus one):
    # recomputed here, in Python, from the per-shard tables.
    if not by:
        placed = pd.concat(
            [pd.read_parquet(os.path.join(out, f"loads-{k}-of-{args.shards}.parquet"), columns=["file"]).assign(shard=k)
             for k in range(1, args.shards + 1)], ignore_index=True).drop_duplicates()
        for folder in [i for i in args.inputs if os.path.isdir(os.path.join(args.workdir, i))]:
            mine = placed[placed["file"].str.startswith(folder.rstrip("/") + "/")]
            for f, k in mine.itertuples(index=False):
                rel = os.path.relpath(f, folder).replace(os.sep, "/")
                want_shard = fnv1a64(rel.encode()) % args.shards + 1
                if want_shard != k:
                    problems.append(f"{f}: in shard {k}, but FNV-1a 64 of '{rel}' names shard {want_shard}")
            print(f"{folder}: {len(mine)} files with loads, each in the shard FNV-1a 64 of its path names")
    for p in problems:
        print("PROBLEM:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
