# SPDX-License-Identifier: GPL-2.0
"""The sections of bench/bench.py and what they share."""
