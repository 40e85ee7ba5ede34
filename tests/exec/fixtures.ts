/** Small source files with hand-counted complexity, shared by the exec and tool tests. */
export const PYTHON_KNOWN = `"""Classifies numbers."""
import sys


def classify(n):
    if n < 0:
        return 'neg'
    elif n == 0:
        return 'zero'
    for i in range(n):
        while i > 0 and i % 2:
            i -= 1
    return 'pos'


class Box:
    def size(self, items):
        return len([x for x in items if x])


if __name__ == '__main__':
    print(classify(int(sys.argv[1])))
`;

export const JS_KNOWN = `// Classifies numbers.
function classify(n) {
  if (n < 0) {
    return 'neg';
  } else if (n === 0) {
    return 'zero';
  }
  for (let i = 0; i < n; i++) {
    while (i > 0 && i % 2) {
      i -= 1;
    }
  }
  return n > 100 ? 'big' : 'pos';
}

class Box {
  size(items) {
    return items.filter((x) => x ?? false).length;
  }
}

const main = () => {
  try {
    console.log(classify(Number(process.argv[2])));
  } catch (error) {
    console.error(error);
  }
};
main();
`;

/** A clean Python organizer: moves files into folders by extension under argv[1]. */
export const PYTHON_ORGANIZER = `"""Sorts the files of a directory into sub-folders by extension."""
import os
import shutil
import sys


def organize(directory):
    """Move each file into a folder named after its extension."""
    for name in sorted(os.listdir(directory)):
        source = os.path.join(directory, name)
        if not os.path.isfile(source) or name.startswith('.'):
            continue
        extension = os.path.splitext(name)[1].lstrip('.').lower() or 'other'
        os.makedirs(os.path.join(directory, extension), exist_ok=True)
        shutil.move(source, os.path.join(directory, extension, name))
        print(f'moved {name} -> {extension}/')


if __name__ == '__main__':
    organize(sys.argv[1] if len(sys.argv) > 1 else '.')
`;
