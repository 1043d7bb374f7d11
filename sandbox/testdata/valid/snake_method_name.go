// func: has_close_elements
// args: [[1.0, 2.8, 3.0], 0.3]
// want: true
package artifact

import "math"

func HasCloseElements(numbers []float64, threshold float64) bool {
	for i := range numbers {
		for j := i + 1; j < len(numbers); j++ {
			if math.Abs(numbers[i]-numbers[j]) < threshold {
				return true
			}
		}
	}
	return false
}

func Other() int { return 1 }
