SELECT
FROM source('orders')
