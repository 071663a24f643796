"""The content of the generated files and the edits made on them: every line carries its path's
id and a tag no other edit has (`fresh_line`), so a merge of versions is recognised and anything
else is not; `plan_edit` plans one edit (and the sed script that makes it); `split_lines`."""

WORDS = ("amber brisk cedar delta ember fjord grove harbor iris juniper kelp lumen moss nectar "
         "onyx pebble quartz river sable thistle umber violet willow xenon yarrow zephyr").split()


# MARK: - Content and edits

def fresh_line(path_id, tag, index, rng):
    return f"{path_id} {tag}.{index} {rng.choice(WORDS)} {rng.choice(WORDS)} {rng.getrandbits(24):06x}\n"


def plan_edit(lines, rng, path_id, tag, allow_structure=True):
    """Replaces 1-3 lines, maybe inserts and deletes one; never touches the header or the footer.

    Returns (result lines, sed script, replaced line indexes): the script, applied by `sed -i` (or,
    replacements only, by `vim -es`), gives the same result.
    """
    body = range(1, len(lines) - 1)
    replace = set(rng.sample(list(body), min(len(body), rng.choice((1, 1, 1, 2, 2, 3)))))
    delete = None
    insert_after = None
    if allow_structure:
        others = [i for i in body if i not in replace]
        if others and (len(body) > 40 or (len(body) > 6 and rng.random() < 0.2)):
            delete = rng.choice(others)
        if len(body) < 8 or rng.random() < 0.25:
            insert_after = rng.choice([i for i in range(0, len(lines) - 1) if i != delete])
    result, script, counter = [], [], 0
    for i, line in enumerate(lines):
        if i == delete:
            script.append(f"{i + 1}d")
        elif i in replace:
            new = fresh_line(path_id, tag, counter, rng)
            counter += 1
            result.append(new)
            script.append(f"{i + 1}s/.*/{new.rstrip()}/")
        else:
            result.append(line)
        if i == insert_after:
            new = fresh_line(path_id, tag, counter, rng)
            counter += 1
            result.append(new)
            script.append(f"{i + 1}a {new.rstrip()}")
    return result, script, sorted(replace)


def split_lines(data):
    text = data.decode("utf-8", errors="surrogateescape")
    return text.splitlines(keepends=True)
