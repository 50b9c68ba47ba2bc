# call 3 (thirteenth session): m2 = main c56ddec; b = TB_BATCH_SHIFT 12; e = b with sb_set_run setting 32 words' atomics in flight together, then one summary atomic per group; f = m2 with that sb_set_run (shift 9). Grids alternating; e's conformance; m2's ouro-c-s conformance (sb_layer_base as selects)
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 570 - $(date +%s) + t0 )); }
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
G="--strategy bump,ualloc,tbuddy --test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,256,1024,4096,8192 --prime --cell-secs 1"
for k in 1 2; do for b in m2 b e f; do run g-$b-$k 45 .gpu/bin/gpu-heap-$b bench $G --json $o/g-$b-$k.json; done; done
C=.gpu/bin/gpu-heap-e
run conf-e-tbuddy 60 $C conformance --strategy tbuddy --workgroups 1024 --json $o/conf-e-tbuddy.json
run conf-e-scale 100 $C conformance --strategy ualloc,tbuddy --scenario scale --workgroups 8192 --json $o/conf-e-scale.json
run conf-e 200 $C conformance --strategy ualloc --workgroups 1024 --json $o/conf-e.json
run conf-m2-c-s 90 .gpu/bin/gpu-heap-m2 conformance --strategy ouro-c-s --workgroups 1024 --json $o/conf-m2-c-s.json
run conf-m2-c-s-8192 60 .gpu/bin/gpu-heap-m2 conformance --strategy ouro-c-s --scenario scale --workgroups 8192 --json $o/conf-m2-c-s-8192.json
cat $o/log.txt; grep -hE " (pass|FAIL|fail) |passed" $o/conf-*.txt 2>/dev/null | cut -c1-110
