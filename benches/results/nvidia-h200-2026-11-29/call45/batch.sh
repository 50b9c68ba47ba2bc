# twenty-third session, call 6 (call45): is call 44's slowdown (ab56e4e) where the Ouroboros metadata lies? h = main 62cb6fb (QUEUE_META at word 160), p = h with QUEUE_META at word 1056 (= ab56e4e^'s 32 modulo 1024 words, 4 KiB), q = word 1184 (= h's 160 modulo 1024), r = word 288. Alloc 1M x 16 B and 64 B of ouro-c-s and ouro-c-va with bump, h p q r in turn, twice
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 170 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
date -u >> $o/log.txt
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
g="--test alloc --threads 1000000 --sizes 16,64 --prime --cell-secs 1"
for k in 1 2; do
  for b in h p q r; do run c-$b-$k 25 .gpu/bin/gpu-heap-$b bench $g --strategy bump,ouro-c-s,ouro-c-va --json $o/c-$b-$k.json; done
done
cat $o/log.txt; for f in $o/c-*.json; do echo $(basename $f) $(grep -o '"strategy": *"ouro-c-[a-z]*", *"threads": *[0-9]*, *"size": *[0-9]*, *"malloc_ms": *[0-9.]*' $f | sed 's/"[a-z_]*": *//g' | tr -d '"' | tr '\n' ' '); done
