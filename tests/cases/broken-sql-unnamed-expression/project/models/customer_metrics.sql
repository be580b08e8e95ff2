SELECT
    customer_id,
    amount * 2
FROM source('orders')
