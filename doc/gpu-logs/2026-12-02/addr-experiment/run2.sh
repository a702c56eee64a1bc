#!/bin/bash
cd "$(dirname "$0")"
echo "== sweep"; ./addr sweep
for i in 1 2 3; do
A=$(./addr child | awk '/ALLOC/{print $2}'); B=$(./addr child | awk '/ALLOC/{print $3}')
echo "== other $A"; ./addr other $A
echo "== other $A held"; ./addr other $A hold
echo "== other $B held"; ./addr other $B hold
done
