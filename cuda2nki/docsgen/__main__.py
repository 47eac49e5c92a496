import sys

from cuda2nki.docsgen import main

sys.exit(main())
