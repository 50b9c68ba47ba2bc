# twenty-third session, call 5 (call44): why the chunk-based variants' 1M x 16-64 B mallocs took 16-92 ms in call 43 against 3.2-5.6 in call 33. A = 5884d0e (call 33's kernels), C = ab56e4e (statistics block in lines of their own), D = 641f387 (QUEUE_META constant), E = 62cb6fb (main). Alloc 1M x 16 B and 64 B of ouro-c-s and ouro-c-va with bump, A C D E in turn, twice
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 200 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
date -u >> $o/log.txt
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
g="--test alloc --threads 1000000 --sizes 16,64 --prime --cell-secs 1"
for k in 1 2; do
  for b in A C D E; do run c-$b-$k 25 .gpu/bin/gpu-heap-$b bench $g --strategy bump,ouro-c-s,ouro-c-va --json $o/c-$b-$k.json; done
done
cat $o/log.txt; grep -h "ouro-c" $o/c-*.txt | grep -v '^\[' | cut -c1-100
