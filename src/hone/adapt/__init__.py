"""Controllers that change a setting while a workload runs, as its behaviour changes
(``hone adapt``): the device read-ahead controller, A-Tune readahead_tune's policy on a
stock kernel. Every change goes through the journal like a knob's."""
