#!/bin/sh
# A tournament as a Slurm array job: sbatch tournaments/cluster/slurm.sh (from the folder the
# config's relative paths start from, on a file system every node sees). Afterwards:
#   factotum report matches/hsg-cluster
#SBATCH --job-name=factotum-hsg
#SBATCH --array=0-7
#SBATCH --cpus-per-task=2
#SBATCH --mem=4G
exec tournaments/cluster/shard.sh tournaments/hsg.toml matches/hsg-cluster
