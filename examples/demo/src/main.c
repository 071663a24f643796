#include <stdio.h>

int main(void) {
    printf("hello from the demo\n");
    return 0;
}
