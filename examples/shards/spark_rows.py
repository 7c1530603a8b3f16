"""ckpt-inspect's shards of a savepoint read by Spark (ckpt-inspect(1), SHARDS): the plan made on the
driver, the shards an RDD, each read by ckpt-inspect -R --shard on its executor (ckpt installed on
every executor), the rows a DataFrame.

    spark-submit spark_rows.py s3://bucket/savepoints/sp-1/ 64
    python3 spark_rows.py /path/to/savepoint 4 local[2]
"""
import json
import subprocess
import sys

from pyspark.sql import SparkSession


def shard_rows(descriptor, snap):
    """The rows of one shard, as JSON text lines (a shard that fails fails its task: Spark retries it)."""
    p = subprocess.run(["ckpt-inspect", "-R", "--shard", descriptor, snap], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip())
    return p.stdout.splitlines()


def main():
    snap, n = sys.argv[1], int(sys.argv[2])
    master = sys.argv[3] if len(sys.argv) > 3 else None
    builder = SparkSession.builder.appName("ckpt-rows")
    spark = (builder.master(master) if master else builder).getOrCreate()
    plan = subprocess.run(["ckpt-inspect", "--shards", str(n), snap], capture_output=True, text=True, check=True)
    shards = plan.stdout.splitlines()
    rows = spark.sparkContext.parallelize(shards, len(shards)).flatMap(lambda d: shard_rows(d, snap))
    df = spark.read.json(rows)
    df.groupBy("state").count().orderBy("state").show(truncate=False)
    counts = {r["state"]: r["count"] for r in df.groupBy("state").count().collect()}
    print(json.dumps(counts, sort_keys=True))
    spark.stop()


if __name__ == "__main__":
    main()
