# twenty-seventh session, call 4 (call65): G4 = G2 whose malloc takes a queued unit only where it sees one (a load of the count first), else the fresh run; G2 = ced6009; M = main 1cbbf18. ouro-p-s and ouro-p-va grids, three builds, twice each
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 300 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
date -u >> $o/log.txt
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
g="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1 --strategy bump,ouro-p-s,ouro-p-va"
for i in 1 2; do for b in M G2 G4; do run s-$b-$i 40 .gpu/bin/gpu-heap-$b bench $g --json $o/s-$b-$i.json; done; done
cat $o/log.txt
