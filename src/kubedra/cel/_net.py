"""The Kubernetes IP and CIDR libraries (apiserver:pkg/cel/library/{ip,cidr}.go, env 1.30).

Only in the StoredExpressions environment at v1.30. Semantics follow Go ``net/netip`` with the
Kubernetes restrictions (no zones, no IPv4-mapped IPv6). ``string(ip)``/``string(cidr)`` are not
available: cel-cpp refuses extra overloads of the builtin ``string`` (docs/deviations.md).
"""

from __future__ import annotations

import functools
import ipaddress
from typing import Any, Final

from cel_expr_python import cel

from kubedra.cel import _cost
from kubedra.cel._decl import Overloads, overload
from kubedra.cel._proto import CIDR, IP, CIDRMsg, IPMsg

T = cel.Type
IPT: Final = T(IP)
CIDRT: Final = T(CIDR)
Addr = ipaddress.IPv4Address | ipaddress.IPv6Address
Iface = ipaddress.IPv4Interface | ipaddress.IPv6Interface

_LL_MCAST4: Final = ipaddress.ip_network("224.0.0.0/24")
_LL_MCAST6: Final = ipaddress.ip_network("ff02::/16")
_LL_UCAST4: Final = ipaddress.ip_network("169.254.0.0/16")
_LL_UCAST6: Final = ipaddress.ip_network("fe80::/10")
_BROADCAST: Final = ipaddress.ip_address("255.255.255.255")


@functools.lru_cache(maxsize=1024)
def parse_ip(s: str) -> Addr:
    """``netip.ParseAddr`` plus the Kubernetes checks; ValueError with upstream-style text."""
    if "%" in s:
        raise ValueError(f"IP address with zone value is not allowed: {s}")
    try:
        addr = ipaddress.ip_address(s)
    except ValueError:
        raise ValueError(f'IP Address "{s}" parse error during conversion from string') from None
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise ValueError(f"IPv4-mapped IPv6 address is not allowed: {s}")
    return addr


@functools.lru_cache(maxsize=1024)
def parse_cidr(s: str) -> Iface:
    """``netip.ParsePrefix`` (address bits beyond the prefix are kept) plus Kubernetes checks."""
    addr_s, slash, bits = s.partition("/")
    if not slash or not bits.isdigit() or (len(bits) > 1 and bits[0] == "0"):
        raise ValueError(f'network address parse error during conversion from string: "{s}"')
    parse_ip(addr_s)
    try:
        return ipaddress.ip_interface(s)
    except ValueError:
        raise ValueError(
            f'network address parse error during conversion from string: "{s}"'
        ) from None


def _ip_msg(a: Addr) -> Any:
    return IPMsg(kubedra_value_key=str(a))


def _cidr_msg(c: Iface) -> Any:
    return CIDRMsg(kubedra_value_key=f"{c.ip}/{c.network.prefixlen}")


def _ip_of(m: Any) -> Addr:
    return parse_ip(m.kubedra_value_key)


def _cidr_of(m: Any) -> Iface:
    return parse_cidr(m.kubedra_value_key)


def _ip(s: str) -> Any:
    _cost.charge(len(s))
    return _ip_msg(parse_ip(s))


def _is_ip(s: str) -> bool:
    _cost.charge(len(s))
    try:
        parse_ip(s)
    except ValueError:
        return False
    return True


def _is_canonical(s: str) -> bool:
    _cost.charge(len(s))
    return str(parse_ip(s)) == s


def _family(m: Any) -> int:
    return _ip_of(m).version


def _is_unspecified(m: Any) -> bool:
    return _ip_of(m).is_unspecified


def _is_loopback(m: Any) -> bool:
    return _ip_of(m).is_loopback


def _is_ll_mcast(m: Any) -> bool:
    a = _ip_of(m)
    return a in (_LL_MCAST4 if a.version == 4 else _LL_MCAST6)


def _is_ll_ucast(m: Any) -> bool:
    a = _ip_of(m)
    return a in (_LL_UCAST4 if a.version == 4 else _LL_UCAST6)


def _is_global_unicast(m: Any) -> bool:
    """Go ``Addr.IsGlobalUnicast`` (private ranges count as global unicast)."""
    a = _ip_of(m)
    return not (
        a.is_unspecified
        or a.is_loopback
        or a.is_multicast
        or a == _BROADCAST
        or a in (_LL_UCAST4 if a.version == 4 else _LL_UCAST6)
    )


def _cidr(s: str) -> Any:
    _cost.charge(len(s))
    return _cidr_msg(parse_cidr(s))


def _is_cidr(s: str) -> bool:
    _cost.charge(len(s))
    try:
        parse_cidr(s)
    except ValueError:
        return False
    return True


def _contains(c: Iface, a: Addr) -> bool:
    return c.version == a.version and a in c.network


def _contains_ip(m: Any, ip: Any) -> bool:
    return _contains(_cidr_of(m), _ip_of(ip))


def _contains_ip_string(m: Any, s: str) -> bool:
    return _contains(_cidr_of(m), parse_ip(s))


def _contains_cidr_of(c: Iface, o: Iface) -> bool:
    return (
        c.version == o.version and o.ip in c.network and c.network.prefixlen <= o.network.prefixlen
    )


def _contains_cidr(m: Any, o: Any) -> bool:
    return _contains_cidr_of(_cidr_of(m), _cidr_of(o))


def _contains_cidr_string(m: Any, s: str) -> bool:
    return _contains_cidr_of(_cidr_of(m), parse_cidr(s))


def _cidr_ip(m: Any) -> Any:
    return _ip_msg(_cidr_of(m).ip)


def _masked(m: Any) -> Any:
    net = _cidr_of(m).network
    return CIDRMsg(kubedra_value_key=f"{net.network_address}/{net.prefixlen}")


def _prefix_length(m: Any) -> int:
    return _cidr_of(m).network.prefixlen


def net_overloads() -> Overloads:
    b, i, s = T.BOOL, T.INT, T.STRING

    return [
        overload("ip", "string_to_ip", IPT, [s], _ip, member=False),
        overload("isIP", "is_ip", b, [s], _is_ip, member=False),
        overload("ip.isCanonical", "ip_is_canonical", b, [s], _is_canonical, member=False),
        overload("family", "ip_family", i, [IPT], _family),
        overload("isUnspecified", "ip_is_unspecified", b, [IPT], _is_unspecified),
        overload("isLoopback", "ip_is_loopback", b, [IPT], _is_loopback),
        overload("isLinkLocalMulticast", "ip_is_link_local_multicast", b, [IPT], _is_ll_mcast),
        overload("isLinkLocalUnicast", "ip_is_link_local_unicast", b, [IPT], _is_ll_ucast),
        overload("isGlobalUnicast", "ip_is_global_unicast", b, [IPT], _is_global_unicast),
        overload("cidr", "string_to_cidr", CIDRT, [s], _cidr, member=False),
        overload("isCIDR", "is_cidr", b, [s], _is_cidr, member=False),
        overload("containsIP", "cidr_contains_ip_ip", b, [CIDRT, IPT], _contains_ip),
        overload("containsIP", "cidr_contains_ip_string", b, [CIDRT, s], _contains_ip_string),
        overload("containsCIDR", "cidr_contains_cidr", b, [CIDRT, CIDRT], _contains_cidr),
        overload("containsCIDR", "cidr_contains_cidr_string", b, [CIDRT, s], _contains_cidr_string),
        # "ip" as a member of CIDR shares the name with the global ip(string): same decl
        overload("ip", "cidr_ip", IPT, [CIDRT], _cidr_ip),
        overload("masked", "cidr_masked", CIDRT, [CIDRT], _masked),
        overload("prefixLength", "cidr_prefix_length", i, [CIDRT], _prefix_length),
    ]
