# call 3 (fifteenth session): m7 = main 5f44333 (ts landed) with tests/ualloc.rs's new crowd test; ph = m7 with the phantom-batch limit (TB_BATCH_BACKS). The crowd test of each five times, churn of each twenty times at 65536 slots, conformance of ph
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
for k in 1 2 3 4 5; do for b in tm tp; do
  s=$(date +%s); timeout 60 .gpu/bin/ualloc-test-$b a_crowd --nocapture --test-threads 1 > $o/crowd-$b-$k.txt 2>&1; echo "crowd-$b-$k: rc $? $(( $(date +%s) - s )) s $(grep -h 'mallocs:' $o/crowd-$b-$k.txt) $(grep -ho '[0-9]* claim, [0-9]* wait and [0-9]* merge failures' $o/crowd-$b-$k.txt)" >> $o/log.txt
done; done; save
ch() { local s=$(date +%s); timeout 60 .gpu/bin/gpu-heap-$2 conformance --strategy ualloc --scenario churn --slots 65536 > $o/$1.txt 2>&1; echo "$1: rc $? $(( $(date +%s) - s )) s $(grep -h 'ualloc     churn' $o/$1.txt | cut -c20-)" >> $o/log.txt; }
for k in $(seq 1 20); do [ $(left) -lt 360 ] && break; ch chw-m7-$k m7; ch chw-ph-$k ph; done; save
run conf-ph-ualloc 170 .gpu/bin/gpu-heap-ph conformance --strategy ualloc --workgroups 1024 --json $o/conf-ph-ualloc.json
run conf-ph-tbuddy 60 .gpu/bin/gpu-heap-ph conformance --strategy tbuddy --workgroups 1024 --json $o/conf-ph-tbuddy.json
run conf-ph-scale 100 .gpu/bin/gpu-heap-ph conformance --strategy ualloc,tbuddy --scenario scale --workgroups 8192 --json $o/conf-ph-scale.json
cat $o/log.txt; grep -h "contention\|FAIL" $o/ch*.txt | sort | uniq -c | head; grep -hE " (pass|FAIL) |  [a-z].*:" $o/conf-*.txt | cut -c1-120
