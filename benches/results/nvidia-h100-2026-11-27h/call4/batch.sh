# Call 4: rw-bm reads its subgroup word while it takes its reservation (w) against HEAD 1453a87 (n): grids of bump, rw-bm, rw, corw alternating n, w; conformance of w.
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
G="--threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1"
for i in 1 2 3; do for b in n w; do
  run bench-$b$i 100 .gpu/bin/gpu-heap-$b bench --strategy bump,rw-bm,rw,corw --test alloc,accumulate $G --json $o/bench-$b$i.json
done; done
run conf-w 200 .gpu/bin/gpu-heap-w conformance --strategy rw-bm,rw,corw --workgroups 1024 --json $o/conf-w.json
run conf-scale-w 100 .gpu/bin/gpu-heap-w conformance --strategy rw-bm,rw,corw --scenario scale --workgroups 8192 --json $o/conf-scale-w.json
cat $o/log.txt; grep -hE " (pass|FAIL|fail) |passed" $o/conf-*.txt | cut -c1-110
