#!/usr/bin/env python3
"""Recomputes a Patience Race deal from its game and seed, with no code of ours.

Written from docs/PROTOCOL.md, "The deal, exactly", alone: pure Python 3,
no crypto library, so a stranger can check a revealed race's deal.

    python3 docs/deal_reference.py GAME SEED   # the layout text and its SHA-256
    python3 docs/deal_reference.py --check     # every vector of PROTOCOL.md

GAME is three-blind-mice, indian, midshipman or virginia-reel.
"""

import hashlib
import os
import sys

MASK = 0xFFFFFFFF
RANKS = "A23456789TJQK"
SUITS = "cdhs"


def rotl(x, n):
    return ((x << n) | (x >> (32 - n))) & MASK


def quarter_round(s, a, b, c, d):
    s[a] = (s[a] + s[b]) & MASK
    s[d] = rotl(s[d] ^ s[a], 16)
    s[c] = (s[c] + s[d]) & MASK
    s[b] = rotl(s[b] ^ s[c], 12)
    s[a] = (s[a] + s[b]) & MASK
    s[d] = rotl(s[d] ^ s[a], 8)
    s[c] = (s[c] + s[d]) & MASK
    s[b] = rotl(s[b] ^ s[c], 7)


def chacha20_block(key_words, counter):
    """The 16 output words of the block with this 64-bit counter, stream id 0."""
    state = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574]
    state += key_words
    state += [counter & MASK, counter >> 32, 0, 0]
    work = list(state)
    for _ in range(10):  # 20 rounds: a column round then a diagonal round
        quarter_round(work, 0, 4, 8, 12)
        quarter_round(work, 1, 5, 9, 13)
        quarter_round(work, 2, 6, 10, 14)
        quarter_round(work, 3, 7, 11, 15)
        quarter_round(work, 0, 5, 10, 15)
        quarter_round(work, 1, 6, 11, 12)
        quarter_round(work, 2, 7, 8, 13)
        quarter_round(work, 3, 4, 9, 14)
    return [(w + s) & MASK for w, s in zip(work, state)]


def chacha_key(seed):
    """The 32-byte key: the seed's eight bytes little-endian, then zeros."""
    return seed.to_bytes(8, "little") + bytes(24)


class Stream:
    """`next_u32`: block 0's words in order, then block 1's, and so on."""

    def __init__(self, seed):
        key = chacha_key(seed)
        self.key_words = [int.from_bytes(key[i : i + 4], "little") for i in range(0, 32, 4)]
        self.counter = 0
        self.words = []

    def next_u32(self):
        if not self.words:
            self.words = chacha20_block(self.key_words, self.counter)
            self.counter += 1
        return self.words.pop(0)


def uniform_below(stream, bound):
    zone = MASK - (MASK % bound + 1) % bound
    while True:
        draw = stream.next_u32()
        if draw <= zone:
            return draw % bound


def card_name(k):
    """Card k of the ordered pack: deck by deck, suits c d h s, Ace to King."""
    return RANKS[k % 13] + SUITS[(k // 13) % 4]


def shuffled_pack(decks, seed):
    pack = [card_name(k) for k in range(52 * decks)]
    stream = Stream(seed)
    for i in range(len(pack) - 1, 0, -1):
        j = uniform_below(stream, i + 1)
        pack[i], pack[j] = pack[j], pack[i]
    return pack


def zone(name, cards, face_down=0):
    return (name, cards, face_down)


def row_by_row(cards, n_piles):
    """Pile p (1-based) gets cards p-1, p-1+n, p-1+2n, ... bottom first."""
    return [cards[p::n_piles] for p in range(n_piles)]


def layout(game, seed):
    """The zones of the deal, in the document's zone order: (name, cards bottom first, face down)."""
    if game == "three-blind-mice":
        p = shuffled_pack(1, seed)
        piles = row_by_row(p[:50], 10)
        zones = [zone(str(i + 1), pile, 3 if i >= 7 else 0) for i, pile in enumerate(piles)]
        zones += [zone("c1", [p[50]]), zone("c2", [p[51]])]
        zones += [zone("f%d" % (i + 1), []) for i in range(4)]
        return zones
    if game in ("indian", "midshipman"):
        n_piles, rows, down = (10, 3, 1) if game == "indian" else (9, 4, 2)
        p = shuffled_pack(2, seed)
        tableau = n_piles * rows
        piles = row_by_row(p[:tableau], n_piles)
        zones = [zone(str(i + 1), pile, down) for i, pile in enumerate(piles)]
        stock = p[tableau:][::-1]  # P[tableau] on top, i.e. last
        zones += [zone("s", stock, len(stock)), zone("w", [])]
        zones += [zone("f%d" % (i + 1), []) for i in range(8)]
        return zones
    if game == "virginia-reel":
        p = shuffled_pack(2, seed)
        first = {}
        for index, card in enumerate(p):
            if card[0] in "234" and card[0] not in first:
                first[card[0]] = index
        taken = set(first.values())
        rest = [card for index, card in enumerate(p) if index not in taken]
        zones = []
        for row, base in zip("ABC", "234"):
            zones.append(zone(row + "1", [p[first[base]]]))
            start = "ABC".index(row) * 7
            for column in range(7):
                zones.append(zone("%s%d" % (row, column + 2), [rest[start + column]]))
        reserves = [[card] for card in rest[21:29]]
        discard = []
        for reserve in reserves:
            if reserve[0][0] == "A":
                discard.append(reserve.pop())
        zones += [zone("r%d" % (i + 1), reserve) for i, reserve in enumerate(reserves)]
        stock = rest[29:][::-1]  # R[29] on top, i.e. last
        zones += [zone("s", stock, len(stock)), zone("x", discard)]
        return zones
    raise ValueError("unknown game %r" % game)


def layout_text(game, seed):
    lines = []
    for name, cards, face_down in layout(game, seed):
        shown = [("#" if i < face_down else "") + card for i, card in enumerate(cards)]
        lines.append(name + ":" + "".join(" " + card for card in shown) + "\n")
    return "".join(lines)


def sha256_hex(text):
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def check_document():
    """Checks every vector table row of PROTOCOL.md's deal subsection."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "PROTOCOL.md")
    with open(path, encoding="utf-8") as document:
        text = document.read()
    section = text[text.index("### The deal, exactly") :]
    section = section[: section.index("\n## ")]
    checked = failed = 0
    for line in section.splitlines():
        if not line.startswith("|"):
            continue
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].isdigit():
            seed = int(cells[0])
            stream = Stream(seed)
            words = ["%08x" % stream.next_u32() for _ in range(20)]
            got = [chacha_key(seed).hex(), " ".join(words[:4]), " ".join(words[16:])]
            ok = got == cells[1:]
            label = "chacha20 seed %d" % seed
        elif len(cells) == 5 and cells[1].isdigit():
            game, seed = cells[0], int(cells[1])
            pack = shuffled_pack(1 if game == "three-blind-mice" else 2, seed)
            got = [pack[0], pack[-1], sha256_hex(layout_text(game, seed))]
            ok = got == cells[2:]
            label = "%s seed %d" % (game, seed)
        else:
            continue
        checked += 1
        failed += not ok
        print("%s %s" % ("ok  " if ok else "FAIL", label) + ("" if ok else ": got %s" % got))
    print("%d vectors checked, %d failed" % (checked, failed))
    return failed == 0 and checked > 0


def main(args):
    if args == ["--check"]:
        return 0 if check_document() else 1
    if len(args) != 2 or not args[1].isdigit() or int(args[1]) >= 2**64:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        text = layout_text(args[0], int(args[1]))
    except ValueError as error:
        print(error, file=sys.stderr)
        return 2
    sys.stdout.write(text)
    print("sha256 " + sha256_hex(text))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
