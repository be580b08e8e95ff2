SELEC nonsense
