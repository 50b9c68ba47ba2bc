# twenty-sixth session, call 6 (call60): F = main at the session's last shader commit (X: conformance kernels with one malloc/free site, compiled at first dispatch; ouro-c-va's token log installing ahead; failed token insertions counted; placed positions in the report). The alloc and accumulate grids of all 13 strategies with bump; conformance at 1024 of every strategy's device-bad-input and round-trip (the two kernels rewritten)
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 540 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
date -u >> $o/log.txt
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
g="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1"
K=.gpu/bin/gpu-heap-F
run walks 70 $K bench $g --strategy bump,rw-bm,rw,corw,rw-malloc --json $o/walks.json
run buddy 40 $K bench $g --strategy tbuddy,ualloc --json $o/buddy.json
run ouro-p 40 $K bench $g --strategy ouro-p-s,ouro-p-va,ouro-p-vl --json $o/ouro-p.json
run ouro-c 50 $K bench $g --strategy ouro-c-s,ouro-c-va,ouro-c-vl --json $o/ouro-c.json
run conf-all 300 $K conformance --scenario device-bad-input,round-trip --workgroups 1024 --json $o/conf-all.json
cat $o/log.txt; grep -hE " (pass|FAIL) " $o/conf*.txt | cut -c1-100
