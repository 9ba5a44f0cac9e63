"""Apple's Lookup and Search API through itunespy (PyPI), pointed at `epf serve`.

Usage: python itunespy_client.py BASE_URL
Prints one line per check, as `name: value`, for Tests/EPFServerTests/AppleClientTests.swift to compare.
"""
import sys

import itunespy

base = sys.argv[1]
itunespy.base_lookup_url = base + "/lookup"
itunespy.base_search_url = base + "/search"


def lookup(name, **arguments):
    try:
        results = itunespy.lookup(**arguments)
    except LookupError:
        print(f"{name}: no results")
        return
    for item in results:
        # The attributes a client reads; a missing one raises AttributeError, which fails the test.
        print(f"{name}: {item.track_id} {item.price} {item.currency} {item.formatted_price}")


def search(name, term, **arguments):
    try:
        results = itunespy.search(term, **arguments)
    except LookupError:
        print(f"{name}: no results")
        return
    print(f"{name}: " + " ".join(f"{item.track_id}:{item.price}:{item.currency}" for item in results))


# 364709193 has prices in the US and Germany only; 562148264 in six storefronts, Japan among them.
lookup("sold us", id=364709193, country="US")
lookup("unsold jp", id=364709193, country="JP")
lookup("sold jp", id=562148264, country="JP")
lookup("both jp", id="364709193,562148264", country="JP")
search("search us", "snap", country="US", entity="software")
search("search jp", "ibooks", country="JP", entity="software")
search("search de", "ibooks", country="DE", entity="software")
