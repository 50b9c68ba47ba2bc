# call 2 (seventeenth session): m9 = main fec6615, kp = branch keep (emptied bins stay with their class), lk = looks, la = looksA (only the look at TB_FREE). Registers, grids alternating, one grid of the fast strategies
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
for b in m9 kp lk la; do run ks-$b 30 .gpu/bin/gpu-heap-$b kernel-stats --strategy ualloc --json $o/ks-$b.json; done
G="--strategy bump,ualloc --test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,256,1024,4096,8192 --prime --cell-secs 1"
for k in 1 2 3; do for b in m9 kp lk la; do run g-$b-$k 25 .gpu/bin/gpu-heap-$b bench $G --json $o/g-$b-$k.json; done; done
run all-m9 150 .gpu/bin/gpu-heap-m9 bench --strategy bump,rw-bm,rw,corw,rw-malloc,ouro-p-s,tbuddy,ualloc --test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1 --json $o/all-m9.json
run conf-kp 170 .gpu/bin/gpu-heap-kp conformance --strategy ualloc --workgroups 1024 --json $o/conf-kp.json
cat $o/log.txt; grep -h "registers\|bench_" $o/ks-*.txt | head; grep -hE " (pass|FAIL) |  [a-z].*:" $o/conf-*.txt | cut -c1-160
