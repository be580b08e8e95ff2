SELECT status, amount
FROM source('orders')
