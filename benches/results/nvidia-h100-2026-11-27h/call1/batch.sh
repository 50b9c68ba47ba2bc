# Call 1 of the session (2026-11-27, eighth): one call site of the tree buddy's malloc in ualloc (n) against main (b): cold compiles, ualloc and tbuddy grids, conformance of n.
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
B=.gpu/bin/gpu-heap-b; N=.gpu/bin/gpu-heap-n

for b in b n b n; do for st in ualloc tbuddy; do
  cold compile-$st-$b .gpu/bin/gpu-heap-$b bench --strategy $st --test alloc --threads 10000 --sizes 16 --heap-size 64MiB --compile-only --json $o/compile-$st-$b-$RANDOM.json
done; done
G="--threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1"
run bench-b 120 $B bench --strategy bump,ualloc,tbuddy --test alloc,accumulate $G --json $o/bench-b.json
run bench-n 120 $N bench --strategy bump,ualloc,tbuddy --test alloc,accumulate $G --json $o/bench-n.json
run bench-b2 120 $B bench --strategy bump,ualloc,tbuddy --test alloc,accumulate $G --json $o/bench-b2.json
run conf-n 400 $N conformance --strategy ualloc --workgroups 1024 --json $o/conf-n.json
cat $o/log.txt; grep -hE " (pass|FAIL|fail) |passed" $o/conf-*.txt | cut -c1-110
