# call 5 (seventeenth session): where 100k x 256 B goes. m9 = main fec6615, m10 = main 0aa2c02: the cell alone, after 64 B, and with the books; tbuddy alone and after 16-64 B
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
B="--test alloc --threads 100000 --prime --cell-secs 1"
for k in 1 2; do for b in m9 m10; do run alone-$b-$k 25 .gpu/bin/gpu-heap-$b bench --strategy bump,ualloc $B --sizes 256 --json $o/alone-$b-$k.json; done; done
for b in m9 m10; do run after64-$b 25 .gpu/bin/gpu-heap-$b bench --strategy bump,ualloc $B --sizes 64,256 --json $o/after64-$b.json; done
for b in m9 m10; do run books-$b 40 .gpu/bin/gpu-heap-$b bench --strategy bump,ualloc $B --sizes 16,64,256,1024 --books --json $o/books-$b.json; done
run tb-alone 25 .gpu/bin/gpu-heap-m10 bench --strategy bump,tbuddy $B --sizes 256 --json $o/tb-alone.json
run tb-after 25 .gpu/bin/gpu-heap-m10 bench --strategy bump,tbuddy $B --sizes 16,64,256 --json $o/tb-after.json
cat $o/log.txt
