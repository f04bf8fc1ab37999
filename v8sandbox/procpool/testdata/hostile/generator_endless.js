// expect: TIMEOUT
// Iterating an endless generator.
function* g() {
  for (let i = 0; ; i++) yield i;
}
let n = 0;
for (const x of g()) n += x;
