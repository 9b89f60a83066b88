#!/usr/bin/env python3
# pyyaml-requote.py: loads the ResourceList with PyYAML and dumps it again
# (sort_keys=False). PyYAML drops every comment, re-quotes strings
# ("1" -> '1'), turns block scalars into quoted ones, reads YAML 1.1
# booleans/octals (yes, 0755) as such and re-indents; kpt then restores
# comments and key order by resource id.
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _krm

_krm.write(_krm.dump(_krm.load(_krm.read()), sort_keys=False))
