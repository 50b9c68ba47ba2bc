# twenty-first session, call 3 (call33): the alloc and accumulate grids of all 13 strategies with bump at f (main 5884d0e's kernels; f881bca adds only the bench flag), as call10; then the alloc test with full statistics (every heap's default) for the strategies other than ouro-p-vl and the chunk-based ones, twice
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 555 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
date -u >> $o/log.txt
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
g="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1"
K=.gpu/bin/gpu-heap-f
run walks 100 $K bench $g --strategy bump,rw-bm,rw,corw,rw-malloc --json $o/walks.json
run buddy 70 $K bench $g --strategy tbuddy,ualloc --json $o/buddy.json
run ouro-p 90 $K bench $g --strategy ouro-p-s,ouro-p-va,ouro-p-vl --json $o/ouro-p.json
run ouro-c 250 $K bench $g --strategy ouro-c-s,ouro-c-va,ouro-c-vl --json $o/ouro-c.json
F="--test alloc --threads 10000,100000,1000000 --sizes 16,256,4096 --prime --cell-secs 1 --strategy bump,rw-bm,rw,corw,rw-malloc,tbuddy,ualloc,ouro-p-s,ouro-p-va --full-statistics"
for k in 1 2; do run full-$k 60 $K bench $F --json $o/full-$k.json; done
cat $o/log.txt
