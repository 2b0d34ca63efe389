#!/usr/bin/env bash
# Gradescope runs this once when it builds the autograder's image (Ubuntu): the compiler and
# the libraries the grader needs (valgrind: the model score of the exercises scored for speed;
# bubblewrap: the sandbox around the submission, used where the container lets it start).
set -euo pipefail
apt-get update
apt-get install -y --no-install-recommends g++ cmake make catch2 libfmt-dev nlohmann-json3-dev python3 valgrind bubblewrap
