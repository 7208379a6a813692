"""Devices, links and the flash read model against their sources."""

import pytest

from sysmodel.cost.devices import FlashModel, get_device, get_link

KIB = 1024


def test_flash_points_from_the_paper() -> None:
    f = FlashModel()
    assert f.throughput(8 * KIB) / 1e9 == pytest.approx(1.25, rel=0.05)  # unbundled fp16 OPT
    assert f.throughput(16 * KIB) / 1e9 == pytest.approx(2.25, rel=0.05)  # bundled
    assert f.throughput(32 * KIB) / 1e9 == pytest.approx(4.0, rel=0.10)  # fp32 bundled (derived)
    assert f.throughput(1 << 30) == pytest.approx(6.1e9)
    # Table 2 I/O latencies are bytes / throughput: 13.4 GB naive in the paper's 2196 ms (the model: 2197)
    from sysmodel.designs.flash.paper import NAIVE_BYTES, TABLE2

    assert f.read_time(NAIVE_BYTES, 1 << 30) * 1e3 == pytest.approx(TABLE2["naive"][2], rel=0.001)
    assert f.throughput(16 * KIB, threads=4) < f.throughput(16 * KIB)
    with pytest.raises(ValueError, match="chunk: 0 not allowed"):
        f.throughput(0)


def test_roofline_and_links() -> None:
    gpu = get_device("rtx4090")
    assert gpu.time(0, 1008e9) == pytest.approx(1.0)
    assert gpu.time(165.2e12, 0) == pytest.approx(1.0)
    assert get_link("pcie4x16").time(32e9) == pytest.approx(1.0, rel=1e-5)
    assert get_link("dimm-link").bw == 25e9
    with pytest.raises(ValueError, match="device: unknown 'tpu'"):
        get_device("tpu")
    with pytest.raises(ValueError, match="link: unknown 'usb'"):
        get_link("usb")
    with pytest.raises(ValueError, match="flops, nbytes: must be >= 0"):
        gpu.time(-1, 0)
