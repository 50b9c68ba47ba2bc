# Call 3: the collective give-back of tb_free (t) against HEAD 1453a87 (n): grids of bump, tbuddy, ualloc alternating n, t; conformance of t.
gunzip -f .gpu/bin/*.gz 2>/dev/null; chmod +x .gpu/bin/*
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
N=.gpu/bin/gpu-heap-n; T=.gpu/bin/gpu-heap-t
G="--threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1"
for i in 1 2; do for b in n t; do
  run bench-$b$i 120 .gpu/bin/gpu-heap-$b bench --strategy bump,tbuddy,ualloc --test alloc,accumulate $G --json $o/bench-$b$i.json
done; done
run conf-t 300 $T conformance --strategy tbuddy,ualloc --workgroups 1024 --json $o/conf-t.json
run conf-scale-t 150 $T conformance --strategy tbuddy,ualloc --scenario scale --workgroups 8192 --json $o/conf-scale-t.json
cat $o/log.txt; grep -hE " (pass|FAIL|fail) |passed" $o/conf-*.txt | cut -c1-110
