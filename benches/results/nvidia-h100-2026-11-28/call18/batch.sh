# call 2 (fifteenth session): churn repeated on m6 (main 16e3e60) and dg (diag-wait: wait-failure details in the claim/merge/ualloc failure words), default and 65536 slots; ts ualloc ten; a third grid pair
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
ch() { # name bin slots
  local s=$(date +%s); timeout 60 .gpu/bin/gpu-heap-$2 conformance --strategy ualloc --scenario churn --slots $3 > $o/$1.txt 2>&1; echo "$1: rc $? $(( $(date +%s) - s )) s $(grep -h 'ualloc     churn' $o/$1.txt | cut -c20-)" >> $o/log.txt; }
for k in $(seq 1 15); do
  [ $(left) -lt 330 ] && break
  ch ch-m6-$k m6 16384; ch ch-dg-$k dg 16384; ch chw-m6-$k m6 65536; ch chw-dg-$k dg 65536; save
done
run conf-ts-ualloc 170 .gpu/bin/gpu-heap-ts conformance --strategy ualloc --workgroups 1024 --json $o/conf-ts-ualloc.json
G="--strategy bump,ualloc,tbuddy --test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,256,1024,4096,8192 --prime --cell-secs 1"
for b in m6 ts; do run g-$b-3 45 .gpu/bin/gpu-heap-$b bench $G --json $o/g-$b-3.json; done
cat $o/log.txt; grep -h "contention\|FAIL" $o/ch*.txt | sort | uniq -c | head -30; grep -hE " (pass|FAIL) " $o/conf-*.txt | cut -c1-110
