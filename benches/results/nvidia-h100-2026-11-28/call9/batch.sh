# call 4 (thirteenth session): k = main c56ddec with TB_BATCH_SHIFT 12 (b of calls 2-3, comments only differ). Its conformance at 1024 and 8192, a grid of bump/ualloc/tbuddy, ouro-c-va's conformance (sb_layer_base as selects)
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 480 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
cold() { # name cmd... : a fresh HOME and no driver disk cache
  local n=$1; shift; local h=$(mktemp -d)
  local s=$(date +%s%N)
  HOME=$h XDG_CACHE_HOME=$h __GL_SHADER_DISK_CACHE=0 timeout 120 "$@" > $o/$n.txt 2>&1
  echo "$n: rc $? $(( ($(date +%s%N) - s) / 1000000 )) ms" >> $o/log.txt; save; }
C=.gpu/bin/gpu-heap-k
run conf-k-tbuddy 60 $C conformance --strategy tbuddy --workgroups 1024 --json $o/conf-k-tbuddy.json
run conf-k-scale 100 $C conformance --strategy ualloc,tbuddy --scenario scale --workgroups 8192 --json $o/conf-k-scale.json
run conf-k 200 $C conformance --strategy ualloc --workgroups 1024 --json $o/conf-k.json
G="--test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,512,1024,2048,4096,8192 --prime --cell-secs 1"
run grid-k-1 60 $C bench --strategy bump,ualloc,tbuddy $G --json $o/grid-k-1.json
run conf-k-c-va 300 $C conformance --strategy ouro-c-va --workgroups 1024 --json $o/conf-k-c-va.json
cat $o/log.txt; grep -hE " (pass|FAIL|fail) |passed" $o/conf-*.txt 2>/dev/null | cut -c1-110
