#!/usr/bin/env bash
# Puts `kvbe-cli probe nvme-read` beside fio on the same file: fio with ioengine=io_uring,
# direct=1 and the same block size, queue depth, offsets (random whole blocks, with
# replacement), warm-up and measured time; the two run alternately, N pairs per setting, and the
# ratio of the medians is printed. Target: probe/fio >= 0.97 at 1 MiB QD 32 and at the KV block.
#
#   bench/nvme-vs-fio.sh --dir /mnt/nvme/tmp [--size 4GiB] [--duration 5] [--pairs 5]
#                        [--settings "1MiB:32 28MiB:32"] [--rw read|write] [--cli build/bin/kvbe-cli]
#                        [--fio-iomem malloc|shmhuge]
#
# The probe's buffers are backed by transparent huge pages, so a block is a few physical segments;
# fio's default malloc buffers are scattered 4 KiB pages, and past the device's segment limit
# (254 on virtio-blk: already at 1 MiB) every fio request is split in two. --fio-iomem shmhuge
# gives fio huge pages too (reserve them first: echo 512 > /proc/sys/vm/nr_hugepages, which is
# 1 GiB; QD x block of fio's buffers must fit).
#
# --rw write compares fio randwrite on its file with `probe nvme-write` on a scratch file of the
# same size in the same folder (the probe never writes a file it did not make).
set -euo pipefail

dir="" size="4GiB" duration=5 pairs=5 settings="1MiB:32 28MiB:32" rw=read iomem=malloc
cli="$(cd "$(dirname "$0")/.." && pwd)/build/bin/kvbe-cli"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --dir) dir="$2"; shift 2 ;;
    --size) size="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    --pairs) pairs="$2"; shift 2 ;;
    --settings) settings="$2"; shift 2 ;;
    --rw) rw="$2"; shift 2 ;;
    --cli) cli="$2"; shift 2 ;;
    --fio-iomem) iomem="$2"; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "nvme-vs-fio: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -n "$dir" && -d "$dir" ]] || { echo "nvme-vs-fio: --dir must name an existing folder on the drive" >&2; exit 2; }
[[ -x "$cli" ]] || { echo "nvme-vs-fio: $cli is not built (pass --cli PATH)" >&2; exit 2; }
[[ "$rw" == read || "$rw" == write ]] || { echo "nvme-vs-fio: --rw read or write" >&2; exit 2; }

if ! command -v fio >/dev/null; then
  echo "nvme-vs-fio: installing fio" >&2
  sudo=""; [[ $(id -u) -eq 0 ]] || sudo="sudo"
  $sudo apt-get update -qq && $sudo apt-get install -y -qq fio >/dev/null
fi

file="$dir/kvbe-vs-fio.$$.dat"
trap 'rm -f "$file"' EXIT INT TERM
# fio bytes: "4GiB" -> "4g" style is ambiguous across versions; give it plain bytes.
bytes() {
  local v="${1%%[A-Za-z]*}" u="${1##*[0-9.]}"
  case "$u" in
    KiB|k|K) echo $((v * 1024)) ;; MiB|m|M) echo $((v * 1024 * 1024)) ;;
    GiB|g|G) echo $((v * 1024 * 1024 * 1024)) ;; ""|B) echo "$v" ;;
    *) echo "nvme-vs-fio: size $1: use B, KiB, MiB or GiB" >&2; exit 2 ;;
  esac
}
size_bytes=$(bytes "$size")
# The probe warms up for 20% of --duration (at most 1 s) before measuring; fio gets the same.
ramp=$(awk -v d="$duration" 'BEGIN { r = d * 0.2; if (r > 1) r = 1; if (r < 0.05) r = 0.05; printf "%.3f", r }')


median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

layout() {
  fio --name=layout --filename="$file" --size="$size_bytes" --rw=write --bs=4M --direct=1 \
      --ioengine=psync --end_fsync=1 --output-format=terse >/dev/null
}

run_fio() { # bs qd -> GB/s (1e9)
  local job="rand$rw" field=7
  if [[ "$rw" == write ]]; then
    field=48 # terse v3: write bandwidth (KiB/s)
    # The probe writes into a scratch file it has just filled; fio gets a just-filled file too,
    # or the drive's (or the host's) write-back of the fill would slow only the probe.
    rm -f "$file"
    layout
  fi
  fio --name=cmp --filename="$file" --size="$size_bytes" --rw="$job" --bs="$(bytes "$1")" \
      --iodepth="$2" --ioengine=io_uring --direct=1 --norandommap --randrepeat=0 \
      --ramp_time="${ramp}s" --runtime="${duration}s" --time_based --iomem="$iomem" --output-format=terse |
    awk -F';' -v f="$field" '{ printf "%.4f\n", $f * 1024 / 1e9 }'
}

run_probe() { # bs qd -> GB/s (1e9)
  local target=(--file "$file") probe=nvme-read
  [[ "$rw" == write ]] && { target=(--dir "$dir" --file-size "$size"); probe=nvme-write; }
  "$cli" probe "$probe" "${target[@]}" --block-sizes "$1" --queue-depths "$2" \
      --duration "${duration}s" --engine io_uring --format jsonl |
    sed -n 's/.*"type":"point".*"y":\([-0-9.eE+]*\).*/\1/p'
}

# Written fully (for writes too: fio would otherwise fallocate, and writes into unwritten extents
# pay for converting them, which the probe's fully written scratch file does not).
echo "nvme-vs-fio: writing $size to $file (fio, O_DIRECT, non-zero data)" >&2
layout

echo "fio iomem=$iomem; $pairs pairs of ${duration} s (after ${ramp} s warm-up) per setting; $size file in $dir"
printf '%-10s %4s %10s %10s %8s   %s\n' block QD "fio GB/s" "probe GB/s" ratio "pairs (fio/probe)"
for s in $settings; do
  bs="${s%%:*}" qd="${s##*:}"
  f_all=() p_all=()
  for ((i = 0; i < pairs; i++)); do
    # Alternate which one goes first, so neither always runs on a drive (or host cache) the
    # other has just warmed.
    if ((i % 2 == 0)); then
      f_all+=("$(run_fio "$bs" "$qd")"); p_all+=("$(run_probe "$bs" "$qd")")
    else
      p_all+=("$(run_probe "$bs" "$qd")"); f_all+=("$(run_fio "$bs" "$qd")")
    fi
  done
  fm=$(printf '%s\n' "${f_all[@]}" | median)
  pm=$(printf '%s\n' "${p_all[@]}" | median)
  detail=""
  for ((i = 0; i < pairs; i++)); do detail+="${f_all[i]}/${p_all[i]} "; done
  printf '%-10s %4s %10.3f %10.3f %7.3fx   %s\n' "$bs" "$qd" "$fm" "$pm" "$(awk -v a="$pm" -v b="$fm" 'BEGIN { print a / b }')" "$detail"
done
