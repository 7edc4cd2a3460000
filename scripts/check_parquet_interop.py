#!/usr/bin/env python3
"""Check that the Parquet tables `vramdiff batch` writes load in pandas (pyarrow), DuckDB and polars, with the
same rows and the figures intact.

    python3 scripts/check_parquet_interop.py RESULTS_DIR

Needs: pip install pandas pyarrow duckdb polars. Exits 1 on any mismatch.
"""
import os
import sys

import duckdb
import pandas as pd
import polars as pl


def main() -> int:
    out = sys.argv[1]
    problems = []
    for table in ["loads", "components", "calibration"]:
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
    founding = loads[loads["file"].str.endswith("founding-k80-gemma3-12b.log")]
    if len(founding) == 1:
        row = founding.iloc[0]
        print(f"founding load via pandas: split {row['layers_split']}, graph actual/estimated {row['ratio_graph']:.3f}")
        if row["layers_split"] != "1,48" or abs(row["ratio_graph"] - 0.328) > 0.01:
            problems.append("founding figures differ")
    q = duckdb.sql(
        f"SELECT name, count(*) AS n, median(ratio) AS median FROM read_parquet('{os.path.join(out, 'components.parquet')}') "
        "WHERE kind = 'component' AND ratio IS NOT NULL GROUP BY name ORDER BY name"
    ).fetchall()
    print("DuckDB median actual/estimated per component:", ", ".join(f"{n} {m:.3f} ({c})" for n, c, m in q))
    for p in problems:
        print("PROBLEM:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
