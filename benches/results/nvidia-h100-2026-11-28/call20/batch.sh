# call 4 (fifteenth session): the crowd test with its failures' statuses, tm (main 5f44333) and tp (the phantom-batch limit), three times each
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
for k in 1 2 3; do for b in tm tp; do
  s=$(date +%s); timeout 60 .gpu/bin/ualloc-test-$b a_crowd --nocapture --test-threads 1 > $o/crowd-$b-$k.txt 2>&1; echo "crowd-$b-$k: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt
done; done; save
cat $o/log.txt; grep -h "mallocs\|panicked\|failed" $o/crowd*.txt | cut -c1-900
