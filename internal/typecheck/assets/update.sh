#!/bin/sh
# Regenerates the compiler assets of package typecheck from the npm
# registry: `make typecheck-assets` (needs npm, zstd, gzip and GNU tar; the
# build itself never does). The files are committed; README.md records
# their sha256.
set -eu
VERSION=6.0.3
# sha256 of typescript-$VERSION.tgz as the registry serves it.
TGZ_SHA256=33cd0ee1beaa8c9e9d15a9da836c62ddea4c34a42d7c2d349dbc80d94165d22a
# The libraries the checker loads: lib.es2022.d.ts and what it references
# (V8 10.9, code mode's engine, implements ES2022).
LIBS="es2022 es2021 es2020 es2019 es2018 es2017 es2016 es2015 es5 decorators decorators.legacy
es2015.core es2015.collection es2015.iterable es2015.symbol es2015.generator es2015.promise es2015.proxy
es2015.reflect es2015.symbol.wellknown es2016.array.include es2016.intl es2017.arraybuffer es2017.date
es2017.intl es2017.object es2017.sharedmemory es2017.string es2017.typedarrays es2018.asynciterable
es2018.asyncgenerator es2018.promise es2018.regexp es2018.intl es2019.array es2019.object es2019.string
es2019.symbol es2019.intl es2020.bigint es2020.intl es2020.date es2020.number es2020.promise
es2020.sharedmemory es2020.string es2020.symbol.wellknown es2021.promise es2021.string es2021.weakref
es2021.intl es2022.array es2022.error es2022.intl es2022.object es2022.regexp es2022.string"

here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
npm pack --silent "typescript@$VERSION" >/dev/null
echo "$TGZ_SHA256  typescript-$VERSION.tgz" | sha256sum -c -
tar xzf "typescript-$VERSION.tgz"
zstd -q -19 -f package/lib/typescript.js -o "$here/typescript.js.zst"
files=""
for l in $LIBS; do files="$files lib.$l.d.ts"; done
(cd package/lib && tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - $files) | gzip -9n >"$here/libs.tar.gz"
cp package/LICENSE.txt "$here/LICENSE.txt"
cp package/ThirdPartyNoticeText.txt "$here/ThirdPartyNoticeText.txt"
cd "$here" && sha256sum typescript.js.zst libs.tar.gz
