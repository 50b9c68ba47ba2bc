#!/bin/bash
# usage: repro.sh tag runs ; env GPU_HEAP_UA_V as set
cd /work/main
for i in $(seq 1 $2); do
GPU_HEAP_UA_PROBE=1 GPU_HEAP_BENCH_BOOKS=1 timeout 900 ${BIN:-target/release/gpu-heap} bench --strategy ualloc --test accumulate,alloc --threads 100000 --sizes 16 --heap-size 256MiB --rounds 3 --json /tmp/rp-$1-$i.json >/dev/null 2>&1
python3 -c "
import json;d=json.load(open('/tmp/rp-$1-$i.json'))
out=[]
for r in d['results']:
  e=r['extra']; last=max(int(k[1]) for k in e if k.startswith('r') and k.endswith('_own_bins'))
  out.append(f\"{r['test'][:5]} own={int(e[f'r{last}_own_bins'])} none={int(e[f'r{last}_claimf'])} unr={max(int(v) for k,v in e.items() if k.endswith('unreachable'))} ms={max(r['malloc_rounds_ms']):.1f}\")
print('$1 $i', *out)"
done
