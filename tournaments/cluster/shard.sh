#!/bin/sh
# One shard of a tournament on a cluster: the shard's number comes from the scheduler.
#   Kubernetes Indexed Job: JOB_COMPLETION_INDEX (0-based), the Job's `completions` as SHARDS.
#   Slurm array job: SLURM_ARRAY_TASK_ID (0-based with --array=0-(N-1)), SLURM_ARRAY_TASK_COUNT.
# Usage: shard.sh CONFIG.toml OUT_DIR   (OUT_DIR on a volume every shard can write to)
# Env: FACTOTUM (the binary; default `factotum`), SHARDS (the number of shards, when the
# scheduler does not give it). After all shards: `factotum report OUT_DIR` (one folder) or
# `factotum report DIR1 DIR2 ...` (a folder per shard), run where the tournament was run.
set -eu
config=$1
out=$2
index=${JOB_COMPLETION_INDEX:-${SLURM_ARRAY_TASK_ID:-}}
count=${SHARDS:-${SLURM_ARRAY_TASK_COUNT:-}}
if [ -z "$index" ] || [ -z "$count" ]; then
    echo "shard.sh: set JOB_COMPLETION_INDEX and SHARDS (Kubernetes) or run as a Slurm array job" >&2
    exit 2
fi
exec "${FACTOTUM:-factotum}" tournament "$config" --shard "$((index + 1))/$count" --out "$out"
