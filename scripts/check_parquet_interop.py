#!/usr/bin/env python3
"""Check that the Parquet tables `vramdiff batch` writes (loads, components, calibration, pairs) load in pandas
(pyarrow), DuckDB and polars, with the same rows and the figures intact; and, given a second folder written with `--partition-by`, that the
Hive-partitioned dataset reads as one table in each of them and equals the flat tables row for row.

    python3 scripts/check_parquet_interop.py RESULTS_DIR [DATASET_DIR PARTITION_COLUMNS]

Needs: pip install pandas pyarrow duckdb polars. Exits 1 on any mismatch.
"""
import os
import sys

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.dataset as ds

# A key that is unique per row. A load's rows share its file and load number, but in `components` they can sit in
# different partitions (device rows carry each GPU's compute capability), so their order inside a load is not
# kept by a dataset reader: kind and name complete the key.
KEYS = {"loads": ["file", "load"], "components": ["file", "load", "kind", "name"]}


def in_key_order(df: pd.DataFrame, table: str, columns) -> pd.DataFrame:
    """`df` with `columns` in that order, rows sorted by the table's key, missing values as None (pandas, DuckDB
    and polars spell a missing boolean differently), index reset."""
    df = df[columns].sort_values(KEYS[table], kind="stable").reset_index(drop=True)
    return df.astype(object).where(df.notna(), None)


def check_dataset(flat_dir: str, dataset_dir: str, by: list, problems: list) -> None:
    """The partitioned dataset, read by pyarrow/pandas, DuckDB and polars, equals the flat tables."""
    for table in ["loads", "components"]:
        flat = pd.read_parquet(os.path.join(flat_dir, f"{table}.parquet"))
        # Hive writes an empty value as __HIVE_DEFAULT_PARTITION__, which reads back as null.
        for c in by:
            flat[c] = flat[c].replace("", None)
        columns = list(flat.columns)
        if flat.duplicated(KEYS[table]).any():
            problems.append(f"{table}: {KEYS[table]} is not unique")
        want = in_key_order(flat, table, columns)
        root = os.path.join(dataset_dir, table)
        glob = os.path.join(root, "**", "*.parquet")
        # Partition values are text: without the type, readers take `era=0.30` for the number 0.3.
        schema = pa.schema([(c, pa.string()) for c in by])
        hive_types = ", ".join(f"'{c}': VARCHAR" for c in by)
        readers = {
            "pyarrow/pandas": lambda: ds.dataset(
                root, format="parquet", partitioning=ds.partitioning(schema, flavor="hive")
            ).to_table().to_pandas(),
            "DuckDB": lambda: duckdb.sql(
                f"SELECT * FROM read_parquet('{glob}', hive_partitioning = true, "
                f"hive_types = {{{hive_types}}})"
            ).df(),
            "polars": lambda: pl.scan_parquet(
                glob, hive_partitioning=True, hive_schema={c: pl.String for c in by}
            ).collect().to_pandas(),
        }
        for name, read in readers.items():
            got = read()
            if sorted(got.columns) != sorted(columns):
                problems.append(f"{table} dataset via {name}: columns differ: {sorted(set(got.columns) ^ set(columns))}")
                continue
            got = in_key_order(got, table, columns)
            try:
                pd.testing.assert_frame_equal(got, want, check_dtype=False)
            except AssertionError as e:
                problems.append(f"{table} dataset via {name} differs from {table}.parquet: {e}")
                continue
            print(f"{table} dataset via {name}: {len(got)} rows, equal to {table}.parquet row for row")
        files = sum(1 for _, _, fs in os.walk(root) for f in fs if f.endswith(".parquet"))
        print(f"{table} dataset: {files} files, partitioned by {', '.join(by)}")


def main() -> int:
    out = sys.argv[1]
    problems = []
    for table in ["loads", "components", "calibration", "pairs"]:
        path = os.path.join(out, f"{table}.parquet")
        by_pandas = pd.read_parquet(path, engine="pyarrow")
        by_polars = pl.read_parquet(path)
        by_duckdb = duckdb.sql(f"SELECT * FROM read_parquet('{path}')").df()
        csv = pd.read_csv(os.path.join(out, f"{table}.csv"))
        counts = {len(by_pandas), by_polars.height, len(by_duckdb), len(csv)}
        if len(counts) != 1:
            problems.append(f"{table}: row counts differ {counts}")
        if list(by_pandas.columns) != by_polars.columns or list(by_duckdb.columns) != by_polars.columns:
            problems.append(f"{table}: column names differ")
        print(f"{table}: {len(by_pandas)} rows, {len(by_pandas.columns)} columns: pandas, polars, DuckDB, CSV agree")
    loads = pd.read_parquet(os.path.join(out, "loads.parquet"))
    # The founding load's graph: 1.18 GiB allocated against the 2.49 GiB its estimator build charged (190 MiB on
    # CUDA0 + 1.3 GiB on CUDA1 + the 1.0 GiB projector graph; docs/founding-cases.md), as tests/batch.rs pins it.
    founding = loads[loads["file"].str.endswith("founding-k80-gemma3-12b.log")]
    if len(founding) == 1:
        row = founding.iloc[0]
        print(f"founding load via pandas: split {row['layers_split']}, graph actual/estimated {row['ratio_graph']:.3f}")
        if row["layers_split"] != "1,48" or abs(row["ratio_graph"] - 0.476) > 0.01:
            problems.append("founding figures differ")
    q = duckdb.sql(
        f"SELECT name, count(*) AS n, median(ratio) AS median FROM read_parquet('{os.path.join(out, 'components.parquet')}') "
        "WHERE kind = 'component' AND ratio IS NOT NULL GROUP BY name ORDER BY name"
    ).fetchall()
    print("DuckDB median actual/estimated per component:", ", ".join(f"{n} {m:.3f} ({c})" for n, c, m in q))
    # A pair across two files (sample-logs/008-… then 201-…, granite 8b on one M1 Pro, issue 53): the KV predicted
    # at num_ctx 32768 × 4 slots meets the 4608 MiB the second run allocated, as tests/batch.rs pins it.
    pairs = pd.read_parquet(os.path.join(out, "pairs.parquet"))
    granite = pairs[pairs["file"].str.endswith("201-macos-metal-m1pro-granite8b-full-mdquote.log")
                    & pairs["file_first"].str.endswith("008-macos-metal-m1pro-granite-8b-128k-partial.log")
                    & (pairs["component"] == "kv")]
    if len(granite) == 1:
        row = granite.iloc[0]
        print(f"granite pair via pandas: KV predicted {row['predicted']}, measured {row['measured']}, {row['verdict']}")
        if row["measured"] != 4608 << 20 or row["verdict"] != "within rounding":
            problems.append("granite pair figures differ")
    by_verdict = duckdb.sql(
        f"SELECT verdict, count(*) FROM read_parquet('{os.path.join(out, 'pairs.parquet')}') GROUP BY verdict ORDER BY verdict"
    ).fetchall()
    print("DuckDB pair figures by verdict:", ", ".join(f"{v} {n}" for v, n in by_verdict))
    if len(sys.argv) > 3:
        check_dataset(out, sys.argv[2], sys.argv[3].split(","), problems)
    for p in problems:
        print("PROBLEM:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
