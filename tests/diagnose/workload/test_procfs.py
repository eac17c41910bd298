"""The /proc and ss formats workload analysis reads, pinned on real lines of this kernel."""

from __future__ import annotations

from hone.diagnose.workload import procfs

DISKSTATS = """\
 254       0 vda 43146 7077 4399794 22494 34592 110663 11933600 82743 0 11648 107867 10964 66 1516608 2097
 254       1 vda1 40000 7000 4000000 20000 30000 100000 11000000 80000 0 11000 100000 0 0 0 0
   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
"""


def test_diskstats_keeps_only_the_whole_disks_asked_for() -> None:
    got = procfs.parse_diskstats(DISKSTATS, {"vda"})
    assert list(got) == ["vda"]
    assert got["vda"] == procfs.DiskCounters(reads=43146, read_sectors=4399794, writes=34592, write_sectors=11933600,
                                             io_ms=11648)


def test_net_dev_and_snmp() -> None:
    net = ("Inter-|   Receive                                                |  Transmit\n"
           " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls "
           "carrier compressed\n"
           "    lo: 1000 10 0 0 0 0 0 0 1000 10 0 0 0 0 0 0\n")
    assert procfs.parse_net_dev(net) == {"lo": (1000, 10, 1000, 10)}
    snmp = "Tcp: RtoAlgorithm ActiveOpens PassiveOpens\nTcp: 1 5 7\nUdp: InDatagrams\nUdp: 3\n"
    assert procfs.parse_snmp(snmp) == {"Tcp.RtoAlgorithm": 1, "Tcp.ActiveOpens": 5, "Tcp.PassiveOpens": 7,
                                       "Udp.InDatagrams": 3}


def test_stat_folds_nice_into_user_and_interrupts_into_system() -> None:
    ticks = procfs.parse_stat("cpu  10 2 30 400 5 6 7 0 0 0\ncpu0 1 1 1 1 1 1 1\nctxt 99\nprocs_running 3\n")
    assert ticks == procfs.CpuTicks(user=12, system=43, idle=400, iowait=5, ctxt=99, procs_running=3)
    assert procfs.parse_stat("nonsense") is None


def test_pid_stat_survives_a_command_name_with_spaces_and_parentheses() -> None:
    line = "123 (my (odd) prog) S 1 123 123 0 -1 4194304 500 0 7 0 250 40 0 0 20 0 1 0 100 0 0"
    assert procfs.parse_pid_stat(line) == (1, 250, 40)


def test_tcp_unix_and_ss() -> None:
    tcp = ("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
           "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 555 1\n"
           "   1: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 556 1\n")
    assert procfs.parse_tcp(tcp) == {555: procfs.TCP_LISTEN, 556: procfs.TCP_ESTABLISHED}
    unix = ("Num       RefCount Protocol Flags    Type St Inode Path\n"
            "0000000000000000: 00000002 00000000 00010000 0001 01 777 /run/x.sock\n"
            "0000000000000000: 00000003 00000000 00000000 0001 03 778\n")
    assert procfs.parse_unix(unix) == {777: (0x10000, 1), 778: (0, 3)}
    ss = ("0 4336 127.0.0.1:6379 127.0.0.1:47628 timer:(on,004ms,0) uid:65534 ino:1037194 sk:1 cgroup:/ <->\n"
          "\t ts sack cubic bytes_sent:2000 bytes_acked:1990 bytes_received:300 segs_out:20 segs_in:22 "
          "data_segs_out:10 data_segs_in:11 send 5bps\n"
          "0 0 127.0.0.1:1 127.0.0.1:2 ino:0 sk:2 <->\n\t bytes_sent:5 segs_out:1\n")
    assert procfs.parse_ss(ss) == {1037194: procfs.TcpCounters(bytes_sent=2000, bytes_received=300, segs=42,
                                                               data_segs=21)}
