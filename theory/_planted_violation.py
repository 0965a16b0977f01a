from numerics.circle.fourier import make_fourier_field
