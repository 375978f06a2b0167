#!/bin/bash
# A hang hunt (#35): runs gp_nuts with interleaved chains several times;
# one still running after $LIMIT seconds gets every thread's stack (gdb or
# eu-stack, where the machine has one) and is killed.
source "$(dirname "$0")/lease.sh"
export FUSION_DEVICE=nvidia
[ -f "$bin/bins.tgz" ] && tar xzf "$bin/bins.tgz" -C "$bin"
{
which gdb eu-stack pstack 2>&1
for k in $(seq ${RUNS:-4}); do
  "$bin/gp_nuts_sym" --n 250 --warmup 200 --draws 200 --cpu-run 0 > "$OUT/run-$k.log" 2>&1 &
  pid=$!
  for s in $(seq ${LIMIT:-40}); do sleep 1; kill -0 $pid 2>/dev/null || break; done
  if kill -0 $pid 2>/dev/null; then
    echo "== run $k still running after ${LIMIT:-40} s: stacks"
    if which gdb > /dev/null 2>&1; then
      gdb -p $pid -batch -ex "thread apply all bt 25" > "$OUT/stacks-$k.txt" 2>&1
    elif which eu-stack > /dev/null 2>&1; then
      eu-stack -p $pid > "$OUT/stacks-$k.txt" 2>&1
    else
      for t in /proc/$pid/task/*; do echo "$t $(cat $t/wchan) $(cat $t/stat | cut -d' ' -f3)"; done > "$OUT/stacks-$k.txt"
    fi
    kill -9 $pid
    head -c 3000 "$OUT/stacks-$k.txt"
  else
    echo "== run $k: $(grep 'whole run' "$OUT/run-$k.log")"
  fi
done
} >> "$S" 2>&1
cat "$S"
