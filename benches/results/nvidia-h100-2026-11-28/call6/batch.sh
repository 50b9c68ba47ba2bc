# call 1 (thirteenth session): m = main 553f371; l = layer-base-selects 813f467 (sb_layer_base a chain of selects); h = merge-held (ua_rounds *merge = *held). kernel-stats, small grids alternating; m's books survey and conformance (new reachability audits on the GPU)
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
for b in m l h; do run ks-$b 60 .gpu/bin/gpu-heap-$b kernel-stats --strategy ualloc,tbuddy --json $o/ks-$b.json; done
G="--strategy bump,ualloc --test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,256,4096 --prime --cell-secs 1"
for k in 1 2; do for b in m l h; do run g-$b-$k 40 .gpu/bin/gpu-heap-$b bench $G --json $o/g-$b-$k.json; done; done
C=.gpu/bin/gpu-heap-m
S="--strategy ualloc,tbuddy --test alloc,accumulate --threads 1000000 --sizes 16,64 --prime --cell-secs 1"
for k in 1 2 3 4; do run s-m-$k 40 $C bench $S --books --json $o/s-m-$k.json; done
run conf-m-tbuddy 60 $C conformance --strategy tbuddy --workgroups 1024 --json $o/conf-m-tbuddy.json
run conf-m-scale 100 $C conformance --strategy ualloc,tbuddy --scenario scale --workgroups 8192 --json $o/conf-m-scale.json
run conf-m 200 $C conformance --strategy ualloc --workgroups 1024 --json $o/conf-m.json
cat $o/log.txt; for f in $o/ks-*.txt; do echo $f; grep -E "malloc|free" $f | cut -c1-160; done; grep -hE " (pass|FAIL|fail) |passed" $o/conf-*.txt 2>/dev/null | cut -c1-110
